import t from "tap";
import { z } from "zod";
import { bind, defineWorkflow, TimeoutError } from "annal";
import { fixture, workflowTest, WorkflowTestError } from "annal/testing";

t.setTimeout(180_000);
// The suite's PostgreSQL (the driver makes a database of its own on it for each test).
// Assigning undefined would set the text "undefined": only where the suite gave a server.
if (process.env.ANNAL_TEST_POSTGRES_URL)
  process.env.DATABASE_URL ??= process.env.ANNAL_TEST_POSTGRES_URL;

const review = defineWorkflow({
  name: "review",
  version: 1,
  parameters: z.object({ doc: z.string().min(1) }),
  bindings: { docs: bind.service<{ size(doc: string): number }>(() => ({ size: () => 0 })) },
  until: "60d",
  async run(flow, { doc }) {
    const size = await flow.step("measure", ({ bindings }) => bindings.docs.size(doc));
    try {
      const { answer, by } = await flow.dialog({
        name: "approve",
        assignees: ["cn=reviewers,ou=groups,dc=example,dc=org"],
        schema: z.object({ ok: z.boolean() }),
        until: "30d",
      });
      if (!answer.ok) throw new Error(`${by.name} refused ${doc}`);
    } catch (error) {
      if (!(error instanceof TimeoutError)) throw error;
      return { doc, size, expired: true };
    }
    const copy = await flow.start<string>("archive", 1, { doc });
    return { doc, size, copy };
  },
});

const archive = defineWorkflow({
  name: "archive",
  version: 1,
  parameters: z.object({ doc: z.string() }),
  async run(flow, { doc }) {
    return flow.step("copy", () => `archived ${doc}`);
  },
});

const orphan = defineWorkflow({
  name: "orphan",
  version: 1,
  parameters: z.object({}),
  async run(flow) {
    return flow.start("archive", 2, { doc: "x" });
  },
});

const ticket = defineWorkflow({
  name: "ticket",
  version: 1,
  parameters: z.object({}),
  bindings: { tickets: bind.service(() => ({})) },
  async run(flow) {
    return flow.request(
      "tickets",
      { item: "laptop" },
      { schema: z.object({ serial: z.string() }) },
    );
  },
});

const accounts = {
  rita: { access: [] },
  olga: { principals: ["CN=Reviewers,OU=Groups,DC=example,DC=org"] },
  sam: {},
};
const docs = fixture("docs", { size: (doc: string) => doc.length * 10 });

t.test("a workflow runs to its result with fixtures, dialogs and a child", async (t) => {
  const wt = await workflowTest({ workflows: [review, archive], accounts, fixtures: [docs] });
  t.teardown(() => wt.close());
  const flow = await wt.start({ doc: "spec" }, { as: "rita" });
  await flow.completeActivity("approve", { ok: true }, { as: "olga" });
  const child = await flow.toHaveChild(archive);
  t.match((await child.waitFor("COMPLETED")).result, "archived spec");
  const done = await flow.waitFor("COMPLETED");
  t.same(done.result, { doc: "spec", size: 40, copy: "archived spec" });
});

// How long passing the 30 days takes is measured by `npm run bench -- testing`, not here.
t.test("a 30-day deadline passes on the test database's clock", async (t) => {
  const wt = await workflowTest({ workflows: [review, archive], accounts, fixtures: [docs] });
  t.teardown(() => wt.close());
  const flow = await wt.start({ doc: "slow" }, { as: "rita" });
  await flow.waitFor("WAITING");
  await wt.advanceClock("30d");
  const done = await flow.waitFor("COMPLETED");
  t.same(done.result, { doc: "slow", size: 40, expired: true });
});

t.test("every failure is a WorkflowTestError with the spec's code", async (t) => {
  const wt = await workflowTest({
    workflows: [review, archive, orphan, ticket],
    accounts,
    fixtures: [docs],
  });
  t.teardown(() => wt.close());

  // WF_TEST_WAIT_TIMEOUT, saying what it saw.
  const waiting = await wt.start({ doc: "a" }, { as: "rita" });
  await t.rejects(waiting.waitFor("COMPLETED", { timeout: 200 }), {
    code: "WF_TEST_WAIT_TIMEOUT",
    message: /it is WAITING, waiting on dialog "approve"/,
  });

  // WF_TEST_MUTATION_REJECTED with the refusal as its cause.
  await t.rejects(waiting.completeActivity("approve", { ok: true }, { as: "sam" }), {
    code: "WF_TEST_MUTATION_REJECTED",
    cause: { code: "WF_NOT_FOUND" },
  });
  await t.rejects(waiting.completeActivity("approve", { ok: "yes" }, { as: "olga" }), {
    code: "WF_TEST_MUTATION_REJECTED",
    cause: { code: "WF_VALIDATION" },
  });
  await t.rejects(wt.start({ doc: "" }, { as: "rita" }), {
    code: "WF_TEST_MUTATION_REJECTED",
    cause: { code: "WF_VALIDATION" },
  });

  // WF_TEST_INSTANCE_ERRORED with the instance's error as its cause.
  await waiting.completeActivity("approve", { ok: false }, { as: "olga" });
  const errored = await waiting.waitFor("COMPLETED").catch((e: unknown) => e);
  t.type(errored, WorkflowTestError);
  t.match(errored, {
    code: "WF_TEST_INSTANCE_ERRORED",
    message: /ERRORED: WF_UNCAUGHT_ERROR: olga refused a/,
  });

  // WF_TEST_UNSUPPORTED_CALL: a child of a version the test does not register.
  const lost = await wt.start({}, { as: "rita", definition: orphan });
  await t.rejects(lost.waitFor("COMPLETED"), {
    code: "WF_TEST_UNSUPPORTED_CALL",
    message: /archive version 2/,
  });

  // WF_TEST_BINDING_FIXTURE_MISSING before start, naming it.
  await t.rejects(wt.start({}, { as: "rita", definition: ticket }), {
    code: "WF_TEST_BINDING_FIXTURE_MISSING",
    message: 'the binding "tickets" has no fixture',
  });

  // WF_TEST_UNSUPPORTED_CALL: flow.request through a fixture that cannot send.
  wt.fixture("tickets", {});
  const request = await wt.start({}, { as: "rita", definition: ticket });
  await t.rejects(request.waitFor("COMPLETED"), {
    code: "WF_TEST_UNSUPPORTED_CALL",
    message: /flow.request reached the binding "tickets"/,
  });

  // WF_TEST_CHILD_DEFINITION_MISMATCH: not registered, or not started.
  const other = defineWorkflow({
    name: "other",
    version: 1,
    parameters: z.object({}),
    run: async () => null,
  });
  const parent = await wt.start({ doc: "b" }, { as: "rita" });
  await t.rejects(parent.toHaveChild(other), { code: "WF_TEST_CHILD_DEFINITION_MISMATCH" });
  await t.rejects(parent.toHaveChild(archive, { timeout: 200 }), {
    code: "WF_TEST_CHILD_DEFINITION_MISMATCH",
    message: /started no child of archive/,
  });
});

t.test("a request is answered in a test through a fixture that sends", async (t) => {
  const sent: unknown[] = [];
  const wt = await workflowTest({
    workflows: [ticket],
    fixtures: [fixture("tickets", { send: (payload: unknown) => sent.push(payload) })],
  });
  t.teardown(() => wt.close());
  const flow = await wt.start({}, { as: "rita" });
  await flow.answerRequest("tickets", { serial: "SN-9" });
  t.same((await flow.waitFor("COMPLETED")).result, { serial: "SN-9" });
  t.same(sent, [{ item: "laptop" }]);
});
