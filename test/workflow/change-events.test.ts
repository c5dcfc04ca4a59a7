import t from "tap";
import { startWorkflow, workflowsForChangeEvent } from "../../src/workflow/index.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(180_000);

/** A leaver-like workflow: says who started it, then waits for a rehire through "hr". */
const HOLD = `
import { bind, defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "hold",
  version: 1,
  parameters: z.object({ uid: z.string() }),
  bindings: { hr: bind.service(() => ({ send() { throw new Error("replaced"); } })) },
  async run(flow, { uid }) {
    const starter = await flow.step("who asks", () => flow.startedBy);
    const answer = await flow.request("hr", { uid }, {
      until: "30d",
      schema: z.object({ rehired: z.literal(true) }),
    });
    return { starter, answer };
  },
});
`;

/** A change event as the hooks worker hands it to `workflowsForChangeEvent`. */
const changeEvent = (eventId: string) => ({
  hook: "hr",
  webhook: "employees",
  source: "hr",
  eventId,
  receivedEventId: "00000000-0000-4000-8000-000000000001",
});

async function setup(
  t: Parameters<typeof definitionsDir>[0] & { teardown(fn: () => unknown): void },
) {
  const dir = definitionsDir(t, { "hold.ts": HOLD });
  const sent: string[] = [];
  const hr = { send: (_payload: unknown, request: { key: string }) => sent.push(request.key) };
  const f = await workflowFixture(t, { dir, bindings: { fixtures: { hr } } });
  return { f, sent, workflows: workflowsForChangeEvent(f) };
}

t.test("flow.startedBy names the account that started the instance, replayed alike", async (t) => {
  const { f } = await setup(t);
  const rita = actor("rita");
  const { instanceId } = await startWorkflow(f, {
    name: "hold",
    parameters: { uid: "ada" },
    as: rita,
  });
  const waiting = await f.settled(instanceId, "WAITING");
  t.match(waiting.calls.get(1), {
    kind: "step",
    result: { accountId: rita.accountId, name: "rita", dn: rita.dn },
  });
});

t.test("a change event's start is idempotent per event and key, and names its hook", async (t) => {
  const { f, workflows } = await setup(t);
  const left = workflows(changeEvent("hr-1"));
  const first = await left.start("hold", { uid: "ada" });
  t.equal(first.created, true);
  t.same(await left.start("hold", { uid: "ada" }), {
    instanceId: first.instanceId,
    created: false,
  });
  const other = await left.start("hold", { uid: "ada" }, { key: "second" });
  t.not(other.instanceId, first.instanceId, "another key starts another instance");
  const waiting = await f.settled(first.instanceId, "WAITING");
  t.match(waiting.calls.get(1), { result: { accountId: "hook:hr", dn: null } });
  await t.rejects(left.start("nothing", {}), { code: "WF_NOT_FOUND" });
  await t.rejects(left.start("hold", { uid: 7 }, { key: "bad" }), { code: "WF_VALIDATION" });
});

t.test("a change event answers a request by its instance and binding, idempotently", async (t) => {
  const { f, sent, workflows } = await setup(t);
  const { instanceId } = await workflows(changeEvent("hr-1")).start("hold", { uid: "ada" });
  await f.settled(instanceId, "WAITING");
  const rehire = workflows(changeEvent("hr-2"));
  const target = { instanceId, request: "hr" };

  await t.rejects(rehire.answer({ instanceId, request: "tickets" }, { rehired: true }), {
    code: "WF_NOT_FOUND",
    message: /has sent no request through "tickets"/,
  });
  await t.rejects(
    rehire.answer({ instanceId: "00000000-0000-4000-8000-00000000dead", request: "hr" }, {}),
    { code: "WF_NOT_FOUND" },
  );
  await t.rejects(rehire.answer(target, { rehired: "yes" }), { code: "WF_VALIDATION" });
  t.same(await rehire.answer(target, { rehired: true }), { instanceId, recorded: true });
  t.same(
    await rehire.answer(target, { rehired: true }),
    { instanceId, recorded: false },
    "the change event retried answers nothing twice",
  );
  t.same(
    await rehire.answer(sent[0]!, { rehired: true }),
    { instanceId, recorded: false },
    "by instance or by key, it is the same request",
  );
  const done = await f.settled(instanceId, "COMPLETED");
  t.same(done.result, {
    starter: { accountId: "hook:hr", name: "hook hr/employees", dn: null },
    answer: { rehired: true },
  });
  await t.rejects(rehire.answer(target, { rehired: true, late: 1 }), { code: "WF_CONFLICT" });
});
