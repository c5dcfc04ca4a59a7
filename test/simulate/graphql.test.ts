import path from "node:path";
import t from "tap";
import { chainBatch, runRetention } from "../../src/audit/index.ts";
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

t.test("a period that begins before the workflow horizon is refused, as `at` is", async (t) => {
  const prossi = await signIn("prossi");
  while ((await chainBatch(app.db.pool, 1000)) > 0);
  // Nothing of the entries is old enough to fold; finished instances are kept from an hour ago.
  const now = Date.now();
  const workflowHorizon = new Date(now - 3_600_000);
  await runRetention(app.db.pool, { horizon: new Date(now - 7_200_000), workflowHorizon });
  const simulate = (from: string) =>
    app.graphql(
      QUERY.replace('"now-1h"', "$from").replace(
        "$source: String!",
        "$source: String!, $from: String!",
      ),
      { cookie: prossi },
      { source: SOURCE, from },
    );
  const before = new Date(now - 5_400_000).toISOString();
  const refused = await simulate(before);
  t.notOk(refused.body.data?.simulateWorkflow);
  t.match(refused.body.errors?.[0], {
    message: `from ${before} is before the retention horizon ${workflowHorizon.toISOString()}: the log keeps no history before it`,
    extensions: {
      annalCode: "ANNAL_BEFORE_RETENTION",
      horizon: workflowHorizon.toISOString(),
      parameter: "from",
    },
  });
  const after = await simulate(new Date(now - 1_800_000).toISOString());
  t.notOk(after.body.errors, JSON.stringify(after.body.errors));
  t.match(after.body.data?.simulateWorkflow, { summary: { starts: 0 } });
});
