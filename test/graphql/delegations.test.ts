import { rmSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { createToken } from "../../src/auth/index.ts";
import { DEMO_PASSWORD, PROSSI, startAccountsAnnal } from "../support/accounts.ts";
import { Browserless, form } from "../support/browserless.ts";
import { eventually } from "../support/eventually.ts";
import { writeDefinition } from "../support/workflow.ts";

t.setTimeout(300_000);

const REPO = path.resolve(import.meta.dirname, "../..");

const APPROVAL = `
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "approval",
  version: 1,
  parameters: z.object({ approver: z.string() }),
  async run(flow, { approver }) {
    const { answer } = await flow.dialog({
      name: "approve",
      assignees: [approver],
      schema: z.object({ approved: z.boolean() }),
      until: "5d",
    });
    return answer;
  },
});
`;

/**
 * Delegation over GraphQL as `annal start` serves it: a person delegates their dialogs, the
 * delegate's inbox lists them marked, the answer names both, the delegation can be ended, and
 * bad arguments get BAD_USER_INPUT or the engine's codes.
 */
t.test("delegateDialogs, myDelegations, a delegated answer and endDelegation", async (t) => {
  const dir = path.join(REPO, ".tap/fixtures", `graphql-delegations-${process.pid}`);
  writeDefinition(dir, "approval.ts", APPROVAL);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const app = await startAccountsAnnal(t, {
    extraToml: `[workflows]\ndir = "${dir}"\ntimerInterval = "200ms"\n`,
  });
  const signIn = async (login: string) => {
    const browser = new Browserless();
    const answer = await browser.request(`${app.url}/auth/login/ldap`, {
      method: "POST",
      body: form({ login, password: DEMO_PASSWORD }),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url },
    });
    if (answer.status !== 303) throw new Error(`${login} could not sign in: ${answer.status}`);
    return {
      headers: {
        cookie: `service_session=${browser.cookie(new URL(app.url).host, "service_session")}`,
      },
    };
  };
  const prossi = await signIn("prossi");
  // krossi is neither operator nor auditor: only the delegation lets them see the instance.
  const krossi = await signIn("krossi");
  const { token } = await createToken(app.db.pool, app.store, { name: "asker", access: [] });
  const asker = { headers: { authorization: `Bearer ${token}` } };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const gql = async (who: { headers: Record<string, string> }, query: string, variables?: any) => {
    const answer = await app.graphql(query, who.headers, variables);
    t.equal(answer.status, 200);
    return answer.body;
  };
  const codeOf = (body: { errors?: { extensions: { code: string } }[] }) =>
    body.errors?.[0]?.extensions.code;

  const DELEGATE = `mutation($to: String!, $from: String, $until: String!) {
    delegateDialogs(to: $to, from: $from, until: $until) {
      id state from until delegator { name } delegate { name } endedAt } }`;
  const granted = await gql(prossi, DELEGATE, { to: "krossi", until: "now+7d" });
  t.notOk(granted.errors, "prossi delegates to krossi");
  const delegation = granted.data.delegateDialogs;
  t.match(delegation, {
    state: "active",
    delegator: { name: "prossi" },
    delegate: { name: "krossi" },
    endedAt: null,
  });

  const MINE = `{ myDelegations { given { id state } received { id delegator { name } } } }`;
  t.same((await gql(prossi, MINE)).data.myDelegations, {
    given: [{ id: delegation.id, state: "active" }],
    received: [],
  });
  t.same((await gql(krossi, MINE)).data.myDelegations, {
    given: [],
    received: [{ id: delegation.id, delegator: { name: "prossi" } }],
  });

  const started = await gql(
    asker,
    `mutation { startWorkflow(name: "approval", parameters: { approver: "${PROSSI}" }) { id } }`,
  );
  t.notOk(started.errors);
  const instanceId = started.data.startWorkflow.id as string;
  const inbox = await eventually(
    async () => {
      const body = await gql(krossi, `{ myDialogs { nodes { id name delegatedBy { name } } } }`);
      const found = body.data.myDialogs.nodes.filter((d: { id: string }) =>
        d.id.startsWith(instanceId),
      );
      return found.length > 0 ? found : undefined;
    },
    { what: "the delegated dialog in krossi's inbox" },
  );
  t.same(inbox, [{ id: `${instanceId}.1`, name: "approve", delegatedBy: { name: "prossi" } }]);
  const INSTANCE = `query($id: ID!) { instance(id: $id) { id state } }`;
  t.same(
    (await gql(krossi, INSTANCE, { id: instanceId })).data.instance,
    { id: instanceId, state: "WAITING" },
    "the delegate opens the instance of a dialog delegated to them",
  );

  const answered = await gql(
    krossi,
    `mutation($id: ID!) { completeDialog(id: $id, answer: { approved: true }) {
      state answeredBy { name } answeredFor { name } } }`,
    { id: `${instanceId}.1` },
  );
  t.same(answered.data?.completeDialog, {
    state: "completed",
    answeredBy: { name: "krossi" },
    answeredFor: { name: "prossi" },
  });

  t.equal(
    (await gql(krossi, INSTANCE, { id: instanceId })).data.instance?.id,
    instanceId,
    "and the instance of the dialog they answered, after answering",
  );

  const END = `mutation($id: ID!) { endDelegation(id: $id) { id state endedAt endedBy { name } } }`;
  t.equal(codeOf(await gql(krossi, END, { id: delegation.id })), "WF_FORBIDDEN");
  const ended = await gql(prossi, END, { id: delegation.id });
  t.match(ended.data.endDelegation, {
    id: delegation.id,
    state: "ended",
    endedAt: /Z$/,
    endedBy: { name: "prossi" },
  });
  t.equal(codeOf(await gql(prossi, END, { id: delegation.id })), "WF_CONFLICT");

  t.equal(
    codeOf(await gql(prossi, DELEGATE, { to: "krossi", until: "next tuesdayish" })),
    "BAD_USER_INPUT",
  );
  t.equal(codeOf(await gql(prossi, DELEGATE, { to: "prossi", until: "now+1d" })), "WF_VALIDATION");
  t.equal(codeOf(await gql(prossi, DELEGATE, { to: "nobody", until: "now+1d" })), "WF_NOT_FOUND");
  t.equal(codeOf(await gql(asker, DELEGATE, { to: "krossi", until: "now+1d" })), "WF_FORBIDDEN");
  t.equal(codeOf(await gql(prossi, END, { id: "not-a-uuid" })), "BAD_USER_INPUT");
});
