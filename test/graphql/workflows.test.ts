import { rmSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { createToken } from "../../src/auth/index.ts";
import { advanceDatabaseClock } from "../../src/workflow/index.ts";
import { DEMO_PASSWORD, startAccountsAnnal } from "../support/accounts.ts";
import { Browserless, signInWithOidc } from "../support/browserless.ts";
import { eventually } from "../support/eventually.ts";
import { writeDefinition } from "../support/workflow.ts";

t.setTimeout(300_000);

const REPO = path.resolve(import.meta.dirname, "../..");

/**
 * The workflow operations over real HTTP, against annal as `annal start` runs it: every
 * refusal with its own code in `extensions.code` (a table, one row per refusal), the reads
 * (catalog, instances with filters and cursors, an instance now and at a past moment, the
 * inbox) and the malformed arguments' BAD_USER_INPUT messages.
 */

const APPROVAL = `
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "approval",
  version: 1,
  title: "Ask someone to approve",
  parameters: z.object({ approver: z.string(), note: z.string().min(3) }),
  async run(flow, { approver, note }) {
    const { answer, by } = await flow.dialog({
      name: "approve",
      assignees: [approver],
      schema: z.object({ approved: z.boolean() }),
      until: "1d",
      data: { note },
    });
    const summary = await flow.step("summarise", async () => ({ approved: answer.approved, by: by.name }));
    return summary;
  },
});
`;

const RESTRICTED = `
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "restricted",
  version: 1,
  parameters: z.object({}),
  access: { start: ["operator"] },
  async run(flow) {
    return await flow.step("nothing", async () => "done");
  },
});
`;

const FAILING = `
import { defineWorkflow, NonRetryableError } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "failing",
  version: 1,
  parameters: z.object({}),
  async run(flow) {
    return await flow.step("fail", async () => {
      throw new NonRetryableError("the backend said no", { code: "BACKEND_NO" });
    });
  },
});
`;

/** A person with no groups: few principals, so under the limit the test sets. */
const SOLO = `
dn: uid=solo,ou=engineering,ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: solo
cn: Sam Solo
sn: Solo
userPassword: ${DEMO_PASSWORD}
`;

t.test("the workflow operations over GraphQL", async (t) => {
  // Not the test's testdir: the accounts support writes its annal.toml there, anew.
  const dir = path.join(REPO, ".tap/fixtures", `graphql-workflows-${process.pid}`);
  writeDefinition(dir, "approval.ts", APPROVAL);
  writeDefinition(dir, "restricted.ts", RESTRICTED);
  writeDefinition(dir, "failing.ts", FAILING);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const app = await startAccountsAnnal(t, {
    provider: "test",
    authToml: "maxPrincipals = 3",
    seedLdif: SOLO,
    extraToml: `[workflows]\ndir = "${dir}"\ntimerInterval = "200ms"\n`,
  });
  const bearer = async (name: string, access: ("operator" | "auditor" | "read")[] = []) => {
    const { token, account } = await createToken(app.db.pool, app.store, { name, access });
    return { headers: { authorization: `Bearer ${token}` }, id: account.id };
  };
  type Who = { headers: Record<string, string>; id: string };
  const alice: Who = await bearer("alice");
  const bob = await bearer("bob");
  const carol = await bearer("carol");
  const ops = await bearer("ops", ["operator", "read"]);

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const gql = async (who: { headers: Record<string, string> }, query: string, variables?: any) => {
    const answer = await app.graphql(query, who.headers, variables);
    t.equal(answer.status, 200, "every GraphQL answer is a 200");
    return answer.body;
  };
  const codeOf = (body: { errors?: { extensions: { code: string } }[] }) =>
    body.errors?.[0]?.extensions.code;

  const START = `mutation($name: String!, $parameters: JSON!, $key: String) {
    startWorkflow(name: $name, parameters: $parameters, startKey: $key) { id state workflow startedBy { name } }
  }`;
  const start = async (who: typeof alice, parameters: unknown, key?: string) => {
    const body = await gql(who, START, { name: "approval", parameters, key });
    t.notOk(body.errors, "started");
    return body.data.startWorkflow.id as string;
  };
  const INSTANCE = `query($id: ID!, $at: String) { instance(id: $id, at: $at) {
    id state asOf result parameters startedBy { id name }
    steps { seq kind name state actingFor { name } }
    dialogs { id name state assignees answer answeredBy { name } until }
    deadlines { kind name dueAt passed }
    events { type version }
  } }`;
  const waitForDialog = (who: typeof alice, id: string) =>
    eventually(
      async () => {
        const body = await gql(who, INSTANCE, { id });
        const dialog = body.data?.instance?.dialogs?.[0];
        return dialog?.state === "pending" ? dialog : undefined;
      },
      { what: `the dialog of ${id}` },
    );

  t.test("the catalog shows what the viewer may start", async (t) => {
    const CATALOG = `{ workflows { name version title hash parameters startAccess versions } }`;
    const mine = await gql(alice, CATALOG);
    t.same(
      mine.data.workflows.map((w: { name: string }) => w.name).sort(),
      ["approval", "failing"],
      "restricted needs operator",
    );
    const approval = mine.data.workflows.find((w: { name: string }) => w.name === "approval");
    t.match(approval, {
      version: 1,
      title: "Ask someone to approve",
      hash: /^[0-9a-f]{64}$/,
      parameters: { type: "object", properties: { approver: {}, note: { minLength: 3 } } },
      startAccess: [],
      versions: [1],
    });
    const theirs = await gql(ops, CATALOG);
    t.equal(theirs.data.workflows.length, 3);
  });

  t.test("start, inbox, answer, and the instance now and at a past moment", async (t) => {
    const id = await start(alice, { approver: "service:bob", note: "new laptop" });
    const dialog = await waitForDialog(alice, id);
    t.match(dialog, { name: "approve", assignees: ["service:bob"], until: /Z$/ });
    const beforeAnswer = new Date().toISOString();

    // The inbox is the workflows projection's: it shows the dialog once the projector has it.
    const inbox = await eventually(
      async () => {
        const body = await gql(
          bob,
          `{ myDialogs { nodes { id name workflow data instance { id } } } }`,
        );
        return body.data.myDialogs.nodes.length > 0 ? body.data.myDialogs.nodes : undefined;
      },
      { what: "the dialog in bob's inbox" },
    );
    t.match(inbox, [
      {
        id: dialog.id,
        name: "approve",
        workflow: "approval",
        data: { note: "new laptop" },
        instance: { id },
      },
    ]);
    t.same((await gql(alice, `{ myDialogs { nodes { id } } }`)).data.myDialogs.nodes, []);

    const answered = await gql(
      bob,
      `mutation($id: ID!) { completeDialog(id: $id, answer: { approved: true }) { id state answer answeredBy { name } } }`,
      { id: dialog.id },
    );
    t.same(answered.data.completeDialog, {
      id: dialog.id,
      state: "completed",
      answer: { approved: true },
      answeredBy: { name: "bob" },
    });
    const done = await eventually(
      async () => {
        const body = await gql(alice, INSTANCE, { id });
        return body.data.instance.state === "COMPLETED" ? body.data.instance : undefined;
      },
      { what: "the instance to complete" },
    );
    t.same(done.result, { approved: true, by: "bob" });
    t.match(done.steps, [
      { seq: 1, kind: "dialog", name: "approve", state: "completed", actingFor: { name: "bob" } },
      { seq: 2, kind: "step", name: "summarise", state: "completed" },
    ]);
    t.match(done.deadlines, [{ kind: "dialog", name: "approve", passed: false }]);
    const types = done.events.map((e: { type: string }) => e.type);
    t.equal(types[0], "WorkflowStarted");
    t.ok(types.indexOf("DialogOpened") < types.indexOf("DialogCompleted"), "in stream order");
    t.equal(types.at(-1), "WorkflowCompleted");

    // Now is now, whatever the moment the view was taken at: with the database's clock an
    // hour behind every event (as when the instance moves on between the view's moment and
    // the read of its state), the view still shows the events its state was folded from.
    await advanceDatabaseClock(app.db.pool, -3_600_000);
    try {
      const behind = (await gql(alice, INSTANCE, { id })).data.instance;
      t.equal(behind.state, "COMPLETED");
      t.same(behind.events, done.events, "every event of the state, in stream order");
    } finally {
      await advanceDatabaseClock(app.db.pool, 3_600_000);
    }

    // The same instance as it was before the answer: the dialog still pending.
    const past = await gql(alice, INSTANCE, { id, at: beforeAnswer });
    t.equal(past.data.instance.state, "WAITING");
    t.equal(past.data.instance.asOf, beforeAnswer);
    t.equal(past.data.instance.dialogs[0].state, "pending");
    t.notOk(past.data.instance.events.some((e: { type: string }) => e.type === "DialogCompleted"));
    // Before it started it did not exist.
    const before = await gql(alice, INSTANCE, { id, at: "2000-01-01T00:00:00Z" });
    t.equal(codeOf(before), "WF_NOT_FOUND");

    // The same start key starts nothing new.
    const again = await start(alice, { approver: "service:bob", note: "same key" }, "k1");
    t.equal(await start(alice, { approver: "service:bob", note: "same key" }, "k1"), again);
  });

  t.test("instances: visibility, filters and cursors", async (t) => {
    for (let i = 0; i < 3; i++) await start(carol, { approver: "service:ops", note: `note ${i}` });
    const LIST = `query($first: Int, $after: String, $state: WorkflowState, $startedBy: String, $since: String, $definition: String) {
      instances(first: $first, after: $after, state: $state, startedBy: $startedBy, since: $since, definition: $definition) {
        nodes { id startedBy { name } state } pageInfo { hasNextPage hasPreviousPage endCursor }
      } }`;
    const carols = await eventually(
      async () => {
        const body = await gql(carol, LIST, { first: 100 });
        return body.data.instances.nodes.length === 3 ? body.data.instances.nodes : undefined;
      },
      { what: "carol's three instances in the projection" },
    );
    t.ok(carols.every((node: { startedBy: { name: string } }) => node.startedBy.name === "carol"));
    // Page by page, two at a time, the newest first, nothing twice.
    const first = await gql(carol, LIST, { first: 2 });
    t.equal(first.data.instances.nodes.length, 2);
    t.equal(first.data.instances.pageInfo.hasNextPage, true);
    const second = await gql(carol, LIST, {
      first: 2,
      after: first.data.instances.pageInfo.endCursor,
    });
    t.equal(second.data.instances.nodes.length, 1);
    t.same(second.data.instances.pageInfo, {
      hasNextPage: false,
      hasPreviousPage: true,
      endCursor: second.data.instances.pageInfo.endCursor,
    });
    t.same(
      [...first.data.instances.nodes, ...second.data.instances.nodes].map(
        (n: { id: string }) => n.id,
      ),
      carols.map((n: { id: string }) => n.id),
    );
    // An assignee sees the instances they have a dialog in; an operator sees all.
    const opsView = await gql(ops, LIST, { first: 100, startedBy: "carol" });
    t.equal(opsView.data.instances.nodes.length, 3);
    const byState = await gql(ops, LIST, { first: 100, state: "COMPLETED" });
    t.ok(byState.data.instances.nodes.every((n: { state: string }) => n.state === "COMPLETED"));
    const future = await gql(ops, LIST, { since: "2999-01-01T00:00:00Z" });
    t.same(future.data.instances.nodes, []);
    const none = await gql(ops, LIST, { definition: "restricted" });
    t.same(none.data.instances.nodes, []);
    // A cursor of another list (other filters) is refused like a forged one.
    const foreign = await gql(carol, LIST, {
      first: 2,
      state: "WAITING",
      after: first.data.instances.pageInfo.endCursor,
    });
    t.equal(codeOf(foreign), "BAD_USER_INPUT");
    t.equal(foreign.errors![0].message, "Invalid pagination cursor");
  });

  t.test("malformed arguments are BAD_USER_INPUT with the spec's messages", async (t) => {
    const rows: [string, string, Record<string, unknown>, string][] = [
      [
        "first 0",
        `{ instances(first: 0) { nodes { id } } }`,
        {},
        "first must be between 1 and 100",
      ],
      [
        "first 101",
        `{ myDialogs(first: 101) { nodes { id } } }`,
        {},
        "first must be between 1 and 100",
      ],
      [
        "a forged cursor",
        `{ instances(after: "bm9wZQ") { nodes { id } } }`,
        {},
        "Invalid pagination cursor",
      ],
      [
        "a since that is no moment",
        `{ instances(since: "the day before") { nodes { id } } }`,
        {},
        "Invalid since filter",
      ],
      [
        "a definition that is no name",
        `{ instances(definition: "no such!") { nodes { id } } }`,
        {},
        "Invalid definition filter",
      ],
      ["an instance id that is not one", `{ instance(id: "42") { id } }`, {}, "Invalid id"],
      [
        "an at that is no moment",
        `{ instance(id: "00000000-0000-0000-0000-000000000000", at: "soon") { id } }`,
        {},
        "Invalid at",
      ],
      [
        "a dialog id that is not one",
        `mutation { completeDialog(id: "x", answer: {}) { id } }`,
        {},
        "Invalid id",
      ],
      [
        "a change feed entry that is no DN",
        `{ changes(entry: "not a dn") { nodes { id } } }`,
        {},
        "Invalid entry filter",
      ],
    ];
    for (const [what, query, variables, message] of rows) {
      const body = await gql(ops, query, variables);
      t.equal(codeOf(body), "BAD_USER_INPUT", what);
      t.equal(body.errors?.[0]?.message, message, what);
    }
  });

  t.test("every refusal carries its own code", async (t) => {
    const mine = await start(alice, { approver: "service:bob", note: "refusals" });
    const dialog = await waitForDialog(alice, mine);
    const failing = await gql(
      alice,
      `mutation { startWorkflow(name: "failing", parameters: {}) { id } }`,
    );
    const failed = failing.data.startWorkflow.id as string;
    await eventually(
      async () => (await gql(alice, INSTANCE, { id: failed })).data.instance.state === "ERRORED",
      { what: "the failing instance to end ERRORED" },
    );
    const COMPLETE = `mutation($id: ID!, $answer: JSON!) { completeDialog(id: $id, answer: $answer) { id } }`;
    const CANCEL = `mutation($id: ID!) { cancelInstance(id: $id) { id state } }`;
    const RETRY = `mutation($id: ID!) { retryInstance(id: $id) { id state } }`;
    const unknown = "00000000-0000-4000-8000-000000000000";
    const anonymous = { headers: {}, id: "" };

    const rows: [string, typeof alice, string, Record<string, unknown>, string][] = [
      ["no credentials", anonymous, `{ workflows { name } }`, {}, "UNAUTHENTICATED"],
      [
        "a workflow that does not exist",
        alice,
        START,
        { name: "nope", parameters: {} },
        "WF_NOT_FOUND",
      ],
      [
        "a workflow the account may not start (hidden)",
        alice,
        START,
        { name: "restricted", parameters: {} },
        "WF_NOT_FOUND",
      ],
      ["an instance that does not exist", alice, INSTANCE, { id: unknown }, "WF_NOT_FOUND"],
      ["an instance hidden from the account", carol, INSTANCE, { id: mine }, "WF_NOT_FOUND"],
      [
        "a dialog hidden from the account",
        carol,
        COMPLETE,
        { id: dialog.id, answer: { approved: true } },
        "WF_NOT_FOUND",
      ],
      [
        "a dialog that does not exist",
        bob,
        COMPLETE,
        { id: `${unknown}.0`, answer: {} },
        "WF_NOT_FOUND",
      ],
      [
        "cancelling an instance hidden from the account",
        carol,
        CANCEL,
        { id: mine },
        "WF_NOT_FOUND",
      ],
      [
        "answering a dialog one is not an assignee of",
        alice,
        COMPLETE,
        { id: dialog.id, answer: { approved: true } },
        "WF_FORBIDDEN",
      ],
      ["cancelling someone else's instance one can see", bob, CANCEL, { id: mine }, "WF_FORBIDDEN"],
      [
        "retrying without the operator access function",
        alice,
        RETRY,
        { id: failed },
        "WF_FORBIDDEN",
      ],
      [
        "failed work without the operator access function",
        alice,
        `{ failedWork { id } }`,
        {},
        "FORBIDDEN",
      ],
      [
        "parameters their schema refuses",
        alice,
        START,
        { name: "approval", parameters: { approver: "x", note: "no" } },
        "WF_VALIDATION",
      ],
      [
        "an answer its schema refuses",
        bob,
        COMPLETE,
        { id: dialog.id, answer: { approved: "yes" } },
        "WF_VALIDATION",
      ],
      ["retrying an instance that is not ERRORED", ops, RETRY, { id: mine }, "WF_CONFLICT"],
    ];
    for (const [what, who, query, variables, code] of rows) {
      const body = await gql(who, query, variables);
      t.equal(codeOf(body), code, what);
      if (code.startsWith("WF_")) t.equal(body.errors![0].extensions.annalCode ?? code, code, what);
      // Where docs/workflows.md says (its table of refusals names extensions.issues).
      if (code === "WF_VALIDATION") t.match(body.errors![0].extensions.issues, [String], what);
    }

    // WF_LOCKED: another holds the instance's lock longer than a command waits.
    const holder = await app.db.pool.connect();
    try {
      await holder.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [
        `annal-workflow:${mine}`,
      ]);
      const locked = await gql(bob, COMPLETE, { id: dialog.id, answer: { approved: true } });
      t.equal(codeOf(locked), "WF_LOCKED", "an instance another holds");
      t.match(locked.errors![0].message, /try again/);
      // The table's Retry-After: 1, where GraphQL can carry it.
      t.equal(locked.errors![0].extensions.retryAfter, 1);
    } finally {
      await holder.query("SELECT pg_advisory_unlock_all()");
      holder.release();
    }

    // WF_CONFLICT: the same dialog answered twice; an instance cancelled twice.
    t.notOk((await gql(bob, COMPLETE, { id: dialog.id, answer: { approved: false } })).errors);
    t.equal(
      codeOf(await gql(bob, COMPLETE, { id: dialog.id, answer: { approved: true } })),
      "WF_CONFLICT",
      "a dialog no longer pending",
    );
    const other = await start(alice, { approver: "service:bob", note: "to cancel" });
    const cancelled = await gql(alice, CANCEL, { id: other });
    t.equal(cancelled.data.cancelInstance.state, "CANCELLED", "the starter cancels");
    t.equal(codeOf(await gql(alice, CANCEL, { id: other })), "WF_CONFLICT", "cancelled already");

    // The operator's retry of the ERRORED instance is accepted (it fails again, as it must).
    const retried = await gql(ops, RETRY, { id: failed });
    t.notOk(retried.errors, "an operator retries an ERRORED instance");

    // The failed work list answers operators.
    t.notOk((await gql(ops, `{ failedWork { id } }`)).errors);
  });

  t.test("people: over the principal limit, and with unconfirmed authority", async (t) => {
    // prossi's groups, nested ones included, are more than the three this annal allows.
    const prossi = new Browserless();
    await signInWithOidc(prossi, app.url, "prossi", DEMO_PASSWORD);
    const overLimit = {
      headers: {
        cookie: `service_session=${prossi.cookie(new URL(app.url).host, "service_session")}`,
      },
    };
    t.equal(
      codeOf(await gql(overLimit, `{ workflows { name } }`)),
      "AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED",
    );
    t.equal(
      codeOf(
        await gql(overLimit, START, {
          name: "approval",
          parameters: { approver: "x", note: "abc" },
        }),
      ),
      "AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED",
    );

    const solo = new Browserless();
    await signInWithOidc(solo, app.url, "solo", DEMO_PASSWORD);
    const person = {
      headers: {
        cookie: `service_session=${solo.cookie(new URL(app.url).host, "service_session")}`,
      },
    };
    const started = await gql(person, START, {
      name: "approval",
      parameters: { approver: "service:bob", note: "a person's start" },
    });
    t.notOk(started.errors, "a signed-in person starts a workflow");
    t.equal(started.data.startWorkflow.startedBy.name, "solo");

    // The origin's provider gone and the principals stale: reads go on, commands are refused.
    await app.stopProvider();
    await app.db.pool.query(
      "UPDATE account_principals SET refreshed_at = now() - interval '1 day'",
    );
    t.notOk((await gql(person, `{ workflows { name } }`)).errors, "reads go on");
    t.equal(
      codeOf(
        await gql(person, START, { name: "approval", parameters: { approver: "x", note: "abc" } }),
      ),
      "WF_AUTHORIZATION_DENIED",
    );
  });
});
