import path from "node:path";
import t from "tap";
import { DEMO_PASSWORD, startAccountsAnnal } from "../support/accounts.ts";
import { Browserless, form } from "../support/browserless.ts";

/**
 * GraphQL's `simulateWorkflow`: an operator (prossi, through the operators' role) gets the
 * simulation's report for a definition's source; a person without `operator` is refused.
 */

t.setTimeout(240_000);

const REPO = path.resolve(import.meta.dirname, "../..");
const app = await startAccountsAnnal(t, {
  extraToml: `[workflows]\ndir = "${path.join(REPO, "ops/demo/workflows")}"\ntimerInterval = "100ms"\n`,
});
const host = new URL(app.url).host;

async function signIn(login: string): Promise<string> {
  const browser = new Browserless();
  const answer = await browser.request(`${app.url}/auth/login/ldap`, {
    method: "POST",
    body: form({ login, password: DEMO_PASSWORD, returnTo: "/auth/session" }),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url },
  });
  if (answer.status !== 303) throw new Error(`${login} could not sign in: ${answer.status}`);
  return `service_session=${browser.cookie(host, "service_session")}`;
}

const SOURCE = `import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "leaver",
  version: 99,
  parameters: z.object({ uid: z.string() }),
  async run() { return "nothing"; },
});
`;
const QUERY = `query Simulate($source: String!) {
  simulateWorkflow(source: $source, from: "now-1h", to: "now", dialogs: "deny")
}`;

t.test("an operator gets the report; anyone else is refused", async (t) => {
  const prossi = await signIn("prossi");
  const answer = await app.graphql(QUERY, { cookie: prossi }, { source: SOURCE });
  t.equal(answer.status, 200, JSON.stringify(answer.body));
  t.notOk(answer.body.errors, JSON.stringify(answer.body.errors));
  t.match(answer.body.data?.simulateWorkflow, {
    definition: { name: "leaver", version: 99, file: "(source)" },
    startsOf: "leaver",
    dialogs: "deny",
    instances: [],
    summary: { starts: 0 },
  });

  const krossi = await signIn("krossi");
  const refused = await app.graphql(QUERY, { cookie: krossi }, { source: SOURCE });
  t.match(refused.body.errors?.[0]?.extensions, { code: /FORBIDDEN|DENIED/ });

  const bad = await app.graphql(
    QUERY.replace('"now-1h"', '"the other day"'),
    { cookie: prossi },
    {
      source: SOURCE,
    },
  );
  t.match(bad.body.errors?.[0], { message: /--from: "the other day" is not a moment/ });
});
