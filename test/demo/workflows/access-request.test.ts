import t from "tap";
import { fixture, workflowTest } from "annal/testing";
import accessRequest from "../../../ops/demo/workflows/access-request.ts";
import { DIRECTOR_DN } from "../../../src/demo/index.ts";
import { DemoDirectory, OFFICE, OPERATORS, PROSSI, group } from "./fixtures.ts";

t.setTimeout(120_000);
// The suite's PostgreSQL (the driver makes a database of its own on it for each test); run
// alone, without one, the driver starts an embedded PostgreSQL of its own.
if (process.env.ANNAL_TEST_POSTGRES_URL) {
  process.env.DATABASE_URL ??= process.env.ANNAL_TEST_POSTGRES_URL;
}

const ON_CALL = group("on-call"); // owned by prossi, the head of Engineering

/** A test over the demo directory: someone outside on-call asks to join it. */
async function setup(t: { teardown(fn: () => unknown): void }, options: { group?: string } = {}) {
  const directory = new DemoDirectory();
  const asker = directory.someoneOutside(options.group ?? ON_CALL);
  const wt = await workflowTest({
    workflows: [accessRequest],
    accounts: {
      asker: { dn: asker },
      // Someone on the rota already, who is not its owner.
      member: { dn: directory.values(ON_CALL, "member").find((dn) => dn !== PROSSI)! },
      prossi: { dn: PROSSI },
      olga: { dn: "uid=olga,ou=sales,ou=people,dc=example,dc=org", principals: [OPERATORS] },
      sam: {},
    },
    fixtures: [fixture("directory", directory)],
    calendars: [OFFICE],
  });
  t.teardown(() => wt.close());
  // Monday 11 January 2027, 10:00 in Berlin: the deadlines count in working days.
  await wt.advanceClockTo("2027-01-11T09:00:00Z");
  return { wt, directory, asker };
}

t.test("the owner approves: the membership is added, as the owner", async (t) => {
  const { wt, directory, asker } = await setup(t);
  const flow = await wt.start({ group: "on-call", reason: "I join the rota" }, { as: "asker" });

  const waiting = await flow.waitFor("WAITING");
  const dialog = [...waiting.calls.values()].find((call) => call.kind === "dialog");
  t.match(dialog, {
    name: "approve",
    assignees: [PROSSI],
    data: {
      group: ON_CALL,
      groupName: "on-call",
      requester: { name: "asker", dn: asker },
      reason: "I join the rota",
    },
    form: { type: "object", properties: { approved: { type: "boolean" } } },
  });
  t.same(directory.writes, [], "nothing is written before someone decides");

  await flow.completeActivity("approve", { approved: true, comment: "welcome" }, { as: "prossi" });
  const done = await flow.waitFor("COMPLETED");
  t.same(done.result, {
    outcome: "approved",
    group: ON_CALL,
    member: asker,
    decidedBy: "prossi",
    comment: "welcome",
    escalated: false,
  });
  t.ok(directory.values(ON_CALL, "member").includes(asker), "the asker is a member");
  const added = [...done.calls.values()].find(
    (c) => c.kind === "step" && c.name === "add the member",
  );
  t.match(added, { actingFor: { name: "prossi", dn: PROSSI } }, "the write acts for the approver");
});

t.test("the owner denies: nothing changes, and the result says so", async (t) => {
  const { wt, directory, asker } = await setup(t);
  const flow = await wt.start({ group: ON_CALL, reason: "by its DN this time" }, { as: "asker" });
  await flow.completeActivity("approve", { approved: false, comment: "not yet" }, { as: "prossi" });
  t.match((await flow.waitFor("COMPLETED")).result, {
    outcome: "denied",
    member: asker,
    decidedBy: "prossi",
    comment: "not yet",
  });
  t.same(directory.writes, []);
});

t.test(
  "unanswered, the request escalates in one dialog: the owner's manager, then the operators",
  async (t) => {
    const { wt, directory, asker } = await setup(t);
    const flow = await wt.start({ group: "on-call", reason: "nobody answers" }, { as: "asker" });
    await flow.waitFor("WAITING");
    const approve = (s: Awaited<ReturnType<typeof flow.waitFor>>) =>
      [...s.calls.values()].find((c) => c.kind === "dialog" && c.name === "approve");

    await wt.advanceClock("3d1m"); // Thursday, past 3 working days
    // Prossi heads Engineering: her manager, the managing director, is asked too.
    const first = await flow.waitFor((s) => {
      const call = approve(s);
      return call?.kind === "dialog" && call.escalation?.reached === 1;
    });
    t.match(approve(first), {
      state: "pending",
      assignees: [PROSSI, DIRECTOR_DN],
      escalation: { reached: 1, levels: [{ mode: "add" }, { mode: "add" }] },
    });
    t.notOk(
      (approve(first) as { escalation?: { levels: { error?: unknown }[] } }).escalation?.levels[0]
        ?.error,
      "the manager level found someone",
    );

    await wt.advanceClock("4d"); // Monday, past 2 more working days
    const second = await flow.waitFor((s) => {
      const call = approve(s);
      return call?.kind === "dialog" && call.escalation?.reached === 2;
    });
    t.match(approve(second), {
      state: "pending",
      assignees: [PROSSI, DIRECTOR_DN, OPERATORS],
    });
    t.equal(
      [...second.calls.values()].filter((c) => c.kind === "dialog").length,
      1,
      "one dialog, no hand-written second one",
    );
    await flow.completeActivity("approve", { approved: true }, { as: "olga" });
    t.match((await flow.waitFor("COMPLETED")).result, {
      outcome: "approved",
      decidedBy: "olga",
      escalated: true,
    });
    t.ok(directory.values(ON_CALL, "member").includes(asker));
  },
);

t.test("nobody answers the owner, the manager or the operators: the request expires", async (t) => {
  const { wt, directory } = await setup(t);
  const flow = await wt.start({ group: "on-call", reason: "quiet week" }, { as: "asker" });
  await flow.waitFor("WAITING");
  await wt.advanceClock("3d1m"); // Thursday: the manager's level
  await wt.advanceClock("4d"); // Monday: the operators' level
  await wt.advanceClock("3d"); // Thursday: 3 more working days, the chain's end
  const done = await flow.waitFor("COMPLETED");
  t.match(done.result, { outcome: "expired", escalated: true });
  t.match(
    [...done.calls.values()].find((c) => c.kind === "dialog"),
    { state: "timed_out", escalation: { reached: 2 } },
  );
  t.same(directory.writes, []);
});

t.test("a group without an owner goes to the operators at once", async (t) => {
  const { wt } = await setup(t, { group: OPERATORS });
  const flow = await wt.start(
    { group: "annal-operators", reason: "I run annal now" },
    { as: "asker" },
  );
  const waiting = await flow.waitFor("WAITING");
  t.match(
    [...waiting.calls.values()].find((c) => c.kind === "dialog"),
    {
      name: "approve",
      assignees: [OPERATORS],
      data: { why: "the group has no owner" },
    },
  );
});

t.test("nobody approves their own request", async (t) => {
  const { wt, directory } = await setup(t, { group: OPERATORS });
  // An operator asks for a role: the operators decide, and the asker is one of them.
  const flow = await wt.start({ group: "annal-operators", reason: "me, me" }, { as: "olga" });
  await flow.completeActivity("approve", { approved: true }, { as: "olga" });
  t.match((await flow.waitFor("COMPLETED")).result, {
    outcome: "denied",
    comment: "a request cannot be approved by the person who made it",
  });
  t.same(directory.writes, []);
});

t.test("the owner asking for their own group does not decide it", async (t) => {
  const { wt } = await setup(t);
  const flow = await wt.start({ group: "on-call", reason: "my own rota" }, { as: "prossi" });
  const waiting = await flow.waitFor("WAITING");
  t.match(
    [...waiting.calls.values()].find((c) => c.kind === "dialog"),
    {
      name: "approve",
      assignees: [OPERATORS],
      data: { why: "the requester is its only owner" },
    },
  );
});

t.test("refusals: a stranger, a bad answer, bad parameters, no such group", async (t) => {
  const { wt, directory } = await setup(t);
  await t.rejects(wt.start({ group: "on-call", reason: "x" }, { as: "asker" }), {
    code: "WF_TEST_MUTATION_REJECTED",
    cause: { code: "WF_VALIDATION" },
  });
  const flow = await wt.start({ group: "on-call", reason: "a good reason" }, { as: "asker" });
  await t.rejects(flow.completeActivity("approve", { approved: true }, { as: "sam" }), {
    code: "WF_TEST_MUTATION_REJECTED",
    cause: { code: "WF_NOT_FOUND" },
  });
  await t.rejects(flow.completeActivity("approve", { approved: "yes" }, { as: "prossi" }), {
    code: "WF_TEST_MUTATION_REJECTED",
    cause: { code: "WF_VALIDATION" },
  });

  const already = await wt.start({ group: "on-call", reason: "am I in?" }, { as: "member" });
  t.match((await already.waitFor("COMPLETED")).result, { outcome: "already a member" });
  t.same(directory.writes, []);

  const nowhere = await wt.start(
    { group: "no-such-group", reason: "it sounds nice" },
    { as: "asker" },
  );
  await t.rejects(nowhere.waitFor("COMPLETED"), {
    code: "WF_TEST_INSTANCE_ERRORED",
    message: /ACCESS_REQUEST_UNKNOWN_GROUP: there is no group no-such-group/,
  });
});
