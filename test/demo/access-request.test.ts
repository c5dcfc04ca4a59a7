import path from "node:path";
import t from "tap";
import { sameDN } from "../../ops/demo/workflows/shared/directory.ts";
import { createDirectoryClient } from "../../src/directory/index.ts";
import { parse as parseToml } from "smol-toml";
import { calendarsSection } from "../../src/config/sections/calendars.ts";
import { calendarsOf } from "../../src/time/business.ts";
import { deadline } from "../../src/workflow/time.ts";
import {
  DEMO_CALENDARS_TOML,
  DEMO_PASSWORD,
  PROSSI,
  startAccountsAnnal,
} from "../support/accounts.ts";
import { Browserless, form, signInWithOidc } from "../support/browserless.ts";
import { eventually } from "../support/eventually.ts";

/**
 * The demo's access request end to end, as the README walks a newcomer through it on
 * `npm start`: Kateřina Rossi (krossi, Sales) signs in with the directory's login form and
 * asks to join `on-call` through GraphQL; its owner Priya Rossi (prossi) signs in through the
 * demo's OpenID provider, finds the dialog in her inbox and approves it; the membership is in
 * the directory, written as prossi, and annal's history of the group names the instance, its
 * step and prossi as the approver. The demo's rules file starts a second request through
 * `POST /api/access-requests`, which prossi denies.
 */

t.setTimeout(240_000);

const REPO = path.resolve(import.meta.dirname, "../..");
const ON_CALL = "cn=on-call,ou=groups,dc=example,dc=org";
const KROSSI = "uid=krossi,ou=sales,ou=people,dc=example,dc=org";

const app = await startAccountsAnnal(t, {
  captureInterval: "200ms",
  // The demo configuration's group type, for the REST channel's history of a group.
  extraToml: `[[directory.types]]
name = "group"
base = "ou=groups,dc=example,dc=org"
filter = "(objectClass=groupOfNames)"

[workflows]
dir = "${path.join(REPO, "ops/demo/workflows")}"
timerInterval = "100ms"

[rules]
file = "${path.join(REPO, "ops/demo/rules/index.ts")}"
`,
});
const host = new URL(app.url).host;
const directory = createDirectoryClient({
  url: app.slapd.url,
  bindDN: app.slapd.bindDN,
  password: app.slapd.password,
});
t.teardown(() => directory.close());

const members = async (group: string) =>
  ((await directory.get(group))?.attributes.member ?? []).map(String);

/** GraphQL as the browser's session, failing the test on any error. */
async function as(browser: Browserless, query: string, variables?: Record<string, unknown>) {
  const { status, body } = await app.graphql(
    query,
    { cookie: `service_session=${browser.cookie(host, "service_session")}` },
    variables,
  );
  if (status !== 200 || body.errors) throw new Error(`${status}: ${JSON.stringify(body)}`);
  return body.data;
}

const krossi = new Browserless();
const prossi = new Browserless();

t.test("each signs in their own way", async (t) => {
  const signedIn = await krossi.request(`${app.url}/auth/login/ldap`, {
    method: "POST",
    body: form({ login: "krossi", password: DEMO_PASSWORD, returnTo: "/auth/session" }),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url },
  });
  t.equal(signedIn.status, 303, "the directory's form");
  const { response } = await signInWithOidc(prossi, app.url, "prossi", DEMO_PASSWORD);
  t.equal(response.status, 200, "the demo's OpenID provider");
  t.match(await as(krossi, "{ viewer { authInfo { person { dn origin } } } }"), {
    viewer: { authInfo: { person: { dn: KROSSI, origin: "directory" } } },
  });
  t.match(await as(prossi, "{ viewer { authInfo { person { dn origin } } } }"), {
    viewer: { authInfo: { person: { dn: PROSSI, origin: "demo-sso" } } },
  });
});

let instanceId = "";
let requestedBefore = new Date();

t.test("krossi asks to join on-call; the catalog offers her the workflow", async (t) => {
  t.notOk(
    (await members(ON_CALL)).some((dn) => sameDN(dn, KROSSI)),
    "not a member before",
  );
  const catalog = await as(krossi, "{ workflows { name version parameters } }");
  const offered = catalog.workflows.find((w: { name: string }) => w.name === "access-request");
  t.match(offered, { version: 1, parameters: { properties: { group: {}, reason: {} } } });

  requestedBefore = new Date();
  const { startWorkflow } = await as(
    krossi,
    `mutation Ask($parameters: JSON!) {
      startWorkflow(name: "access-request", parameters: $parameters) { id state startedBy { name dn } }
    }`,
    { parameters: { group: "on-call", reason: "I join the support rota in March" } },
  );
  t.match(startWorkflow, { startedBy: { dn: KROSSI } });
  instanceId = startWorkflow.id;
});

t.test("prossi finds it in her inbox and approves it", async (t) => {
  const dialog = await eventually(
    async () => {
      const { myDialogs } = await as(
        prossi,
        "{ myDialogs { nodes { id name data form until escalation { reached levels { at mode } } } } }",
      );
      return myDialogs.nodes.find((d: { id: string }) => d.id.startsWith(`${instanceId}.`));
    },
    { what: "the request in prossi's inbox" },
  );
  t.match(dialog, {
    name: "approve",
    data: {
      group: ON_CALL,
      requester: { dn: KROSSI },
      reason: "I join the support rota in March",
    },
    form: { properties: { approved: { type: "boolean" } } },
  });
  // The chain in working days of the demo's calendar after the request was made (within this
  // test run): the manager added after 3, the operators after 5, the end after 8.
  const office = calendarsOf(
    calendarsSection().parse(parseToml(DEMO_CALENDARS_TOML).calendars as unknown[]),
  );
  t.match(dialog.escalation, { reached: 0, levels: [{ mode: "add" }, { mode: "add" }] });
  const within = (moment: string, span: string) => {
    const at = Date.parse(moment);
    t.ok(
      at >= deadlineOf(span, requestedBefore) && at <= deadlineOf(span, new Date()),
      `${span}: ${moment}`,
    );
  };
  within(dialog.escalation.levels[0].at, "3bd");
  within(dialog.escalation.levels[1].at, "5bd");
  within(dialog.until, "8bd");
  function deadlineOf(span: string, from: Date): number {
    return Date.parse(deadline(span, from, null, office)!);
  }
  const nothing = await as(krossi, "{ myDialogs { nodes { id } } }");
  t.same(nothing.myDialogs.nodes, [], "not in the requester's inbox");

  const { completeDialog } = await as(
    prossi,
    `mutation Approve($id: ID!) {
      completeDialog(id: $id, answer: { approved: true, comment: "welcome" }) { state answeredBy { dn } }
    }`,
    { id: dialog.id },
  );
  t.match(completeDialog, { state: "completed", answeredBy: { dn: PROSSI } });
});

t.test("the membership is in the directory, and its history names the approval", async (t) => {
  const done = await eventually(
    async () => {
      const { instance } = await as(
        krossi,
        `query Done($id: ID!) { instance(id: $id) { state result } }`,
        { id: instanceId },
      );
      return instance.state === "COMPLETED" ? instance : undefined;
    },
    { what: "the request to complete" },
  );
  t.match(done.result, { outcome: "approved", group: ON_CALL, member: KROSSI, escalated: false });
  t.ok(
    (await members(ON_CALL)).some((dn) => sameDN(dn, KROSSI)),
    "krossi is in on-call",
  );

  const cause = `cause { __typename ... on WorkflowCause { instanceId workflow step approvedBy { name dn } } }`;
  const change = await eventually(
    async () => {
      const { changes } = await as(
        prossi,
        `query Group($group: String!) { changes(entry: $group, first: 100) { nodes {
          id entryUUID dn changeType actor attributes ${cause} } } }`,
        { group: ON_CALL },
      );
      return changes.nodes.find(
        (c: { cause: { instanceId?: string } | null }) => c.cause?.instanceId === instanceId,
      );
    },
    { what: "the captured membership in the group's history" },
  );
  t.match(change, {
    dn: ON_CALL,
    changeType: "modify",
    attributes: ["member"],
    cause: {
      __typename: "WorkflowCause",
      workflow: "access-request",
      step: "add the member",
      approvedBy: { dn: PROSSI },
    },
  });
  t.ok(sameDN(String(change.actor), PROSSI), `the directory names prossi (${change.actor})`);

  // The REST channel's history of the group says the same.
  const rest = await fetch(`${app.url}/api/entries/groups/${change.entryUUID}/changes?first=100`, {
    headers: { cookie: `service_session=${prossi.cookie(host, "service_session")}` },
  });
  t.equal(rest.status, 200);
  const { nodes } = (await rest.json()) as { nodes: { changeId: string; cause: unknown }[] };
  t.match(
    nodes.find((node) => node.changeId === change.id),
    {
      cause: {
        kind: "workflow",
        instanceId,
        workflow: "access-request",
        step: "add the member",
        approvedBy: { name: "prossi", dn: PROSSI },
      },
    },
    "the REST channel's cause",
  );

  // The same chain from the instance's side.
  const { instance } = await as(
    prossi,
    `query Made($id: ID!) { instance(id: $id) {
      steps { name kind state actingFor { dn } }
      directoryChanges { nodes { dn ${cause} } } } }`,
    { id: instanceId },
  );
  t.match(instance.directoryChanges.nodes, [
    { dn: ON_CALL, cause: { approvedBy: { dn: PROSSI } } },
  ]);
  t.match(
    instance.steps.find((s: { name: string }) => s.name === "add the member"),
    { kind: "step", state: "completed", actingFor: { dn: PROSSI } },
  );
});

t.test("the demo's endpoint starts a request as the caller; a denial writes nothing", async (t) => {
  const session = `service_session=${krossi.cookie(host, "service_session")}`;
  const answer = await fetch(`${app.url}/api/access-requests`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: app.url, cookie: session },
    body: JSON.stringify({ group: "engineering", reason: "to read the design reviews" }),
  });
  t.equal(answer.status, 201, answer.status === 201 ? "" : await answer.clone().text());
  const started = (await answer.json()) as { id: string; state: string };
  const before = await members("cn=engineering,ou=groups,dc=example,dc=org");

  const dialog = await eventually(
    async () => {
      const { myDialogs } = await as(prossi, "{ myDialogs { nodes { id } } }");
      return myDialogs.nodes.find((d: { id: string }) => d.id.startsWith(`${started.id}.`));
    },
    { what: "the second request in prossi's inbox" },
  );
  await as(
    prossi,
    `mutation Deny($id: ID!) { completeDialog(id: $id, answer: { approved: false }) { state } }`,
    { id: dialog.id },
  );
  const done = await eventually(
    async () => {
      const { instance } = await as(
        krossi,
        `query D($id: ID!) { instance(id: $id) { state result startedBy { dn } } }`,
        {
          id: started.id,
        },
      );
      return instance.state === "COMPLETED" ? instance : undefined;
    },
    { what: "the denied request to complete" },
  );
  t.match(done, {
    result: { outcome: "denied", decidedBy: "prossi", member: KROSSI },
    startedBy: { dn: KROSSI },
  });
  t.same(await members("cn=engineering,ou=groups,dc=example,dc=org"), before, "no write");
});
