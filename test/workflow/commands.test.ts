import t from "tap";
import {
  advanceDatabaseClock,
  cancelInstance,
  completeDialog,
  dialogIdOf,
  retryInstance,
  startWorkflow,
  startWorkflows,
} from "../../src/workflow/index.ts";
import { lockInstance } from "../../src/workflow/lock.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(180_000);

const APPROVAL = `
import { defineWorkflow, TimeoutError } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "approval",
  version: 1,
  parameters: z.object({ owner: z.string(), reason: z.string().min(3) }),
  access: { start: ["requester"] },
  async run(flow, { owner, reason }) {
    try {
      const { answer, by } = await flow.dialog({
        name: "approve",
        assignees: [owner, "cn=approvers,ou=groups,dc=example,dc=org"],
        schema: z.object({ approved: z.boolean(), comment: z.string().optional() }),
        until: "3d",
        data: { reason },
      });
      return { approved: answer.approved, by: by.name };
    } catch (error) {
      if (!(error instanceof TimeoutError)) throw error;
      const escalated = await flow.dialog({
        name: "escalate",
        assignees: ["operators"],
        schema: z.object({ approved: z.boolean() }),
      });
      return { approved: escalated.answer.approved, escalated: true };
    }
  },
});
`;

const requester = actor("rita", { access: ["requester"] });
const owner = actor("olga");
const stranger = actor("sam");
const approverByGroup = actor("gus", { principals: ["CN=Approvers,OU=Groups,DC=example,DC=org"] });
const operator = actor("opal", { access: ["operator"] });

async function setup(
  t: Parameters<typeof definitionsDir>[0] & { teardown(fn: () => unknown): void },
) {
  const dir = definitionsDir(t, { "approval.ts": APPROVAL });
  const f = await workflowFixture(t, { dir });
  const start = async () => {
    const { instanceId } = await startWorkflow(f, {
      name: "approval",
      parameters: { owner: owner.accountId, reason: "on-call rota" },
      as: requester,
    });
    await f.settled(instanceId, "WAITING");
    return instanceId;
  };
  return { f, start };
}

t.test(
  "a dialog waits for an assignee's schema-valid answer, recorded with who gave it",
  async (t) => {
    const { f, start } = await setup(t);
    const id = await start();
    const waiting = await f.state(id);
    t.match(waiting.calls.get(1), {
      kind: "dialog",
      name: "approve",
      state: "pending",
      data: { reason: "on-call rota" },
      form: { type: "object", properties: { approved: { type: "boolean" } } },
    });
    await t.rejects(
      completeDialog(f, { dialogId: dialogIdOf(id, 1), answer: { approved: "yes" }, as: owner }),
      { code: "WF_VALIDATION", message: /approved/ },
      "an answer its schema refuses",
    );
    await completeDialog(f, { dialogId: dialogIdOf(id, 1), answer: { approved: true }, as: owner });
    const done = await f.settled(id, "COMPLETED");
    t.same(done.result, { approved: true, by: "olga" });
    await t.rejects(
      completeDialog(f, { dialogId: dialogIdOf(id, 1), answer: { approved: false }, as: owner }),
      { code: "WF_CONFLICT" },
      "a dialog no longer pending",
    );
  },
);

t.test("a principal (a group DN, compared as a DN) makes an assignee", async (t) => {
  const { f, start } = await setup(t);
  const id = await start();
  await completeDialog(f, {
    dialogId: dialogIdOf(id, 1),
    answer: { approved: false },
    as: approverByGroup,
  });
  t.same((await f.settled(id, "COMPLETED")).result, { approved: false, by: "gus" });
});

t.test(
  "refusals: not found alike for absent and hidden, forbidden, conflict, locked",
  async (t) => {
    const { f, start } = await setup(t);
    const id = await start();
    const dialogId = dialogIdOf(id, 1);
    await t.rejects(
      startWorkflow(f, { name: "approval", parameters: {}, as: stranger }),
      {
        code: "WF_NOT_FOUND",
      },
      "a definition the account may not start is not found",
    );
    await t.rejects(startWorkflow(f, { name: "nothing", parameters: {}, as: requester }), {
      code: "WF_NOT_FOUND",
    });
    await t.rejects(
      startWorkflow(f, { name: "approval", parameters: { owner: "x", reason: "" }, as: requester }),
      { code: "WF_VALIDATION", details: { issues: [/reason/] } },
    );
    const absent = completeDialog(f, {
      dialogId: dialogIdOf("00000000-0000-4000-8000-000000000000", 1),
      answer: {},
      as: owner,
    });
    await t.rejects(absent, { code: "WF_NOT_FOUND" });
    await t.rejects(
      completeDialog(f, { dialogId, answer: { approved: true }, as: stranger }),
      {
        code: "WF_NOT_FOUND",
      },
      "hidden looks like absent",
    );
    await t.rejects(
      completeDialog(f, { dialogId, answer: { approved: true }, as: operator }),
      { code: "WF_FORBIDDEN" },
      "an operator sees the dialog but is not its assignee",
    );
    await t.rejects(cancelInstance(f, { instanceId: id, as: owner }), { code: "WF_FORBIDDEN" });
    await t.rejects(retryInstance(f, { instanceId: id, as: operator }), { code: "WF_CONFLICT" });
    const lock = await lockInstance(f.pool, id);
    t.ok(lock, "the test holds the instance's lock");
    await t.rejects(completeDialog(f, { dialogId, answer: { approved: true }, as: owner }), {
      code: "WF_LOCKED",
      headers: { "retry-after": "1" },
    });
    await lock!.release();
    await cancelInstance(f, { instanceId: id, as: requester, reason: "no longer needed" });
    const cancelled = await f.settled(id, "CANCELLED");
    t.match(cancelled.calls.get(1), { state: "cancelled" });
    await t.rejects(cancelInstance(f, { instanceId: id, as: operator }), { code: "WF_CONFLICT" });
    await t.rejects(completeDialog(f, { dialogId, answer: { approved: true }, as: owner }), {
      code: "WF_CONFLICT",
    });
  },
);

t.test("a dialog's deadline on the database's clock: WF_TIMEOUT, caught to escalate", async (t) => {
  const { f, start } = await setup(t);
  const id = await start();
  await advanceDatabaseClock(f.pool, 3 * 24 * 3600 * 1000 + 1000);
  await f.engine.fireTimers();
  const escalated = await f.settled(id, (s) => s.calls.get(2)?.kind === "dialog");
  t.match(escalated.calls.get(1), { kind: "dialog", state: "timed_out" });
  t.match(escalated.calls.get(2), { kind: "dialog", name: "escalate", state: "pending" });
  await t.rejects(
    completeDialog(f, { dialogId: dialogIdOf(id, 1), answer: { approved: true }, as: owner }),
    { code: "WF_CONFLICT" },
    "too late to answer the first",
  );
  await completeDialog(f, {
    dialogId: dialogIdOf(id, 2),
    answer: { approved: true },
    as: actor("ops", { principals: ["operators"] }),
  });
  t.same((await f.settled(id, "COMPLETED")).result, { approved: true, escalated: true });
});

const BROKEN = `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "broken",
  version: 1,
  parameters: z.object({}),
  async run(flow) {
    const n = await flow.step("count", ({ bindings }) => bindings.counter.next());
    if (n < 2) throw new Error("not yet: " + n);
    return n;
  },
  bindings: { counter: { kind: "service", create: () => ({ next: () => 0 }) } },
});
`;

t.test("an ERRORED instance is retried by an operator from where it failed", async (t) => {
  const dir = definitionsDir(t, { "broken.ts": BROKEN });
  let n = 0;
  const f = await workflowFixture(t, {
    dir,
    bindings: { fixtures: { counter: { next: () => ++n } } },
  });
  const { instanceId } = await startWorkflow(f, { name: "broken", parameters: {}, as: requester });
  const errored = await f.settled(instanceId, "ERRORED");
  t.match(errored.error, { code: "WF_UNCAUGHT_ERROR", message: "not yet: 1" });
  await t.rejects(retryInstance(f, { instanceId, as: requester }), { code: "WF_FORBIDDEN" });
  await retryInstance(f, { instanceId, as: operator });
  // The step completed before the failure: a retry replays its result, it does not run again.
  const again = await f.settled(
    instanceId,
    (s) => s.status === "ERRORED" && s.version > errored.version,
  );
  t.equal(n, 1, "the completed step ran once");
  t.match(again.error, { message: "not yet: 1" });
});

t.test(
  "startWorkflows starts many at once, each once by its key, as startWorkflow would",
  async (t) => {
    const { f } = await setup(t);
    const start = (key: string, reason = "on-call rota") => ({
      name: "approval",
      parameters: { owner: owner.accountId, reason },
      as: requester,
      startKey: key,
    });
    const started = await startWorkflows(f, [start("a"), start("b"), start("c")]);
    t.same(
      started.map((s) => s.created),
      [true, true, true],
    );
    t.equal(new Set(started.map((s) => s.instanceId)).size, 3, "three instances");
    for (const { instanceId } of started) {
      // Each is woken and runs to its dialog, with its deadline's timer.
      t.match((await f.settled(instanceId, "WAITING")).calls.get(1), { kind: "dialog" });
    }
    const again = await startWorkflows(f, [start("b"), start("c"), start("d"), start("d")]);
    t.same(
      again.map((s) => s.created),
      [false, false, true, false],
      "the keys started already, and a key twice in one call, start nothing",
    );
    t.same(
      again.slice(0, 2).map((s) => s.instanceId),
      started.slice(1).map((s) => s.instanceId),
    );
    t.equal(again[3]!.instanceId, again[2]!.instanceId);
    t.same(await startWorkflow(f, start("a")), {
      instanceId: started[0]!.instanceId,
      created: false,
    });

    const count = async () =>
      Number(
        (
          await f.pool.query<{ n: string }>(
            "SELECT count(*) AS n FROM events WHERE type = 'WorkflowStarted'",
          )
        ).rows[0]!.n,
      );
    const before = await count();
    await t.rejects(startWorkflows(f, [start("e"), start("f", "no")]), { code: "WF_VALIDATION" });
    await t.rejects(startWorkflows(f, [{ ...start("g"), as: stranger }]), { code: "WF_NOT_FOUND" });
    t.equal(await count(), before, "a refusal starts none of them");

    // A key started on its own meanwhile: each instance once, whichever wins.
    const [bulk, single] = await Promise.all([
      startWorkflows(f, [start("h"), start("i")]),
      startWorkflow(f, start("h")),
    ]);
    t.equal(bulk[0]!.instanceId, single.instanceId, "one instance of key h");
    t.equal(
      Number(
        (
          await f.pool.query<{ n: string }>(
            "SELECT count(*) AS n FROM events WHERE idempotency_key = 'workflow-start:h'",
          )
        ).rows[0]!.n,
      ),
      1,
    );
  },
);

const STEP_FIRST = `
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "step-first",
  version: 1,
  parameters: z.object({ owner: z.string() }),
  access: { start: ["requester"] },
  async run(flow, { owner }) {
    const looked = await flow.step("look", () => 41 + 1);
    const { answer } = await flow.dialog({
      name: "confirm",
      assignees: [owner],
      schema: z.object({ ok: z.boolean() }),
      until: "2d",
    });
    return { looked, ok: answer.ok };
  },
});
`;

t.test(
  "startWorkflows until the first wait: a dialog first is opened with the start, a step first is the engine's",
  async (t) => {
    const dir = definitionsDir(t, { "approval.ts": APPROVAL, "step-first.ts": STEP_FIRST });
    const f = await workflowFixture(t, { dir });
    const events = async (instanceId: string) =>
      (
        await f.pool.query<{ type: string; transaction_id: string }>(
          `SELECT type, transaction_id::text FROM events WHERE stream_id = $1
            ORDER BY stream_version`,
          [`workflow-${instanceId}`],
        )
      ).rows;
    const [dialogFirst, stepFirst] = await startWorkflows(
      f,
      [
        {
          name: "approval",
          parameters: { owner: owner.accountId, reason: "on-call rota" },
          as: requester,
          startKey: "dialog-first",
        },
        {
          name: "step-first",
          parameters: { owner: owner.accountId },
          as: requester,
          startKey: "step-first",
        },
      ],
      { untilFirstWait: true },
    );
    const opened = await events(dialogFirst!.instanceId);
    t.same(
      opened.map((e) => e.type),
      ["WorkflowStarted", "DialogOpened"],
      "the dialog is open once the start returns",
    );
    t.equal(opened[1]!.transaction_id, opened[0]!.transaction_id, "in the start's transaction");
    const timers = await f.pool.query<{ reason: string; due_at: Date }>(
      "SELECT reason, due_at FROM workflow_timers WHERE instance_id = $1",
      [dialogFirst!.instanceId],
    );
    t.same(
      timers.rows.map((r) => r.reason),
      ["dialog 1"],
      "with its deadline's timer",
    );
    const state = await f.state(dialogFirst!.instanceId);
    t.match(state.calls.get(1), {
      kind: "dialog",
      name: "approve",
      state: "pending",
      assignees: [owner.accountId, "cn=approvers,ou=groups,dc=example,dc=org"],
      data: { reason: "on-call rota" },
      form: { type: "object", properties: { approved: { type: "boolean" } } },
    });
    t.equal(state.status, "WAITING");

    // The engine replays the recorded dialog when the answer wakes it.
    await completeDialog(f, {
      dialogId: dialogIdOf(dialogFirst!.instanceId, 1),
      answer: { approved: true },
      as: owner,
    });
    t.same((await f.settled(dialogFirst!.instanceId, "COMPLETED")).result, {
      approved: true,
      by: "olga",
    });

    // A step is never run by a start: the engine is woken for it, and opens the dialog after.
    const waiting = await f.settled(stepFirst!.instanceId, "WAITING");
    t.match(waiting.calls.get(1), { kind: "step", name: "look", result: 42 });
    const own = await events(stepFirst!.instanceId);
    t.equal(own[0]!.type, "WorkflowStarted");
    t.notOk(
      own.slice(1).some((e) => e.transaction_id === own[0]!.transaction_id),
      "nothing but its start in the start's transaction",
    );
  },
);
