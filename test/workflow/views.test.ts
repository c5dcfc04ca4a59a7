import t from "tap";
import type { CallRecord, InstanceState } from "../../src/workflow/index.ts";
import { instanceView } from "../../src/workflow/read/views.ts";

const PRIYA = { accountId: "a-1", name: "prossi", dn: "uid=prossi,ou=people,dc=example,dc=org" };
const at = (text: string) => new Date(text);

function state(calls: CallRecord[], extra: Partial<InstanceState> = {}): InstanceState {
  return {
    id: "6f1d2c3b-0000-4000-8000-000000000001",
    definition: { name: "access-request", version: 3, hash: "ab".repeat(32) },
    parameters: { group: "cn=on-call" },
    startedBy: PRIYA,
    startedAt: at("2026-03-01T09:00:00Z"),
    until: "2026-03-08T09:00:00.000Z",
    parent: { instanceId: "6f1d2c3b-0000-4000-8000-000000000000", seq: 2 },
    status: "WAITING",
    calls: new Map(calls.map((call) => [call.seq, call])),
    deadlinePassed: false,
    updatedAt: at("2026-03-01T09:05:00Z"),
    version: 7,
    ...extra,
  };
}

const dialog: CallRecord = {
  kind: "dialog",
  seq: 2,
  name: "approve",
  dialogId: "6f1d2c3b-0000-4000-8000-000000000001.2",
  assignees: ["cn=owners"],
  form: { type: "object" },
  data: null,
  until: "2026-03-02T09:00:00.000Z",
  state: "completed",
  answer: { approve: true },
  by: PRIYA,
  openedAt: at("2026-03-01T09:01:00Z"),
  endedAt: at("2026-03-01T10:00:00Z"),
};
const step: CallRecord = {
  kind: "step",
  seq: 1,
  name: "lookup",
  attempts: 2,
  state: "retrying",
  retryAt: "2026-03-01T09:10:00.000Z",
  actingFor: null,
  startedAt: at("2026-03-01T09:00:01Z"),
};
const child: CallRecord = {
  kind: "child",
  seq: 3,
  childId: "6f1d2c3b-0000-4000-8000-000000000002",
  definition: { name: "provision", version: 1 },
  until: null,
  state: "running",
  startedAt: at("2026-03-01T10:00:01Z"),
};

t.test(
  "an instance's view: its calls in order, its dialogs, its child ids, times as text",
  async (t) => {
    const view = instanceView(state([child, dialog, step]), {
      at: undefined,
      asOf: at("2026-03-01T12:00:00Z"),
    });
    t.equal(view.workflow, "access-request");
    t.equal(view.parentId, "6f1d2c3b-0000-4000-8000-000000000000");
    t.equal(view.streamVersion, 7);
    t.equal(view.asOf, "2026-03-01T12:00:00.000Z");
    t.same(view.startedBy, { id: "a-1", name: "prossi", dn: PRIYA.dn });
    t.same(
      view.steps.map((s) => [s.seq, s.kind, s.name, s.childId]),
      [
        [1, "step", "lookup", null],
        [2, "dialog", "approve", null],
        [3, "child", "provision", child.kind === "child" ? child.childId : null],
      ],
    );
    t.match(view.steps[1], { startedAt: "2026-03-01T09:01:00.000Z", result: { approve: true } });
    t.same(
      view.dialogs.map((d) => [d.id, d.instanceId, d.workflow, d.answeredBy?.name]),
      [[dialog.kind === "dialog" ? dialog.dialogId : "", view.id, "access-request", "prossi"]],
    );
  },
);

t.test("an instance's deadlines say whether they had passed at the view's moment", async (t) => {
  const view = instanceView(state([step, dialog, child]), {
    at: at("2026-03-01T09:30:00Z"),
    asOf: at("2026-03-01T09:30:00Z"),
  });
  t.same(
    view.deadlines.map((d) => [d.kind, d.seq, d.dueAt, d.passed]),
    [
      ["instance", null, "2026-03-08T09:00:00.000Z", false],
      ["retry", 1, "2026-03-01T09:10:00.000Z", true],
      ["dialog", 2, "2026-03-02T09:00:00.000Z", false],
    ],
  );
});
