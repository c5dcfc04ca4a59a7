import t from "tap";
import { fixture, workflowTest } from "annal/testing";
import defaultGroups from "../../../ops/demo/workflows/default-groups.ts";
import leaver from "../../../ops/demo/workflows/leaver.ts";
import { DemoDirectory, group, outboxFixture } from "./fixtures.ts";

t.setTimeout(120_000);
// The suite's PostgreSQL (the driver makes a database of its own on it for each test); run
// alone, without one, the driver starts an embedded PostgreSQL of its own.
if (process.env.ANNAL_TEST_POSTGRES_URL) {
  process.env.DATABASE_URL ??= process.env.ANNAL_TEST_POSTGRES_URL;
}

const DAY = 24 * 3600 * 1000;

/** A leaver for someone of Engineering who is in a few groups. */
async function setup(t: { teardown(fn: () => unknown): void }) {
  const directory = new DemoDirectory();
  const engineers = directory.values(group("engineering"), "member");
  // The one in most groups: the test sees several memberships go.
  const dn = engineers
    .map((person) => ({ person, groups: directory.groupsOf(person).length }))
    .sort((a, b) => b.groups - a.groups)[1]!.person;
  const uid = /^uid=([^,]+),/.exec(dn)![1]!;
  const hr = outboxFixture("hr");
  const wt = await workflowTest({
    workflows: [leaver, defaultGroups],
    // The hook starts it as annal; an operator may, by hand: the test is the operator.
    accounts: { opal: { access: ["operator"] } },
    fixtures: [fixture("directory", directory), hr.fixture],
  });
  t.teardown(() => wt.close());
  return { wt, directory, hr, dn, uid, groupsBefore: directory.groupsOf(dn) };
}

t.test("the account is disabled and its memberships go at once", async (t) => {
  const { wt, directory, hr, dn, uid, groupsBefore } = await setup(t);
  t.ok(groupsBefore.length >= 2, `in ${groupsBefore.length} groups`);
  const flow = await wt.start({ uid }, { as: "opal" });
  const waiting = await flow.waitFor((s) =>
    [...s.calls.values()].some((c) => c.kind === "request" && c.state === "pending"),
  );
  t.ok(directory.values(dn, "employeeType").includes("disabled"), "marked disabled");
  t.same(directory.groupsOf(dn), [], "in no group");
  const steps = [...waiting.calls.values()].filter((c) => c.kind === "step").map((c) => c.name);
  t.same(steps, [
    "disable the account",
    "find the memberships",
    ...groupsBefore.map((g) => `leave ${g}`),
    "send hr",
  ]);
  // HR is told when the entry goes: 30 days from now on the database's clock.
  t.equal(hr.sent.length, 1);
  const notice = hr.sent[0]!.payload as { uid: string; dn: string; deleteAfter: string };
  t.match(notice, { uid, dn });
  const state = await flow.state();
  const days = (Date.parse(notice.deleteAfter) - state.startedAt.getTime()) / DAY;
  t.ok(Math.abs(days - 30) < 0.01, `the notice says ${days} days`);
});

t.test("30 days later, with no rehire, the entry is deleted", async (t) => {
  const { wt, directory, dn, uid, groupsBefore } = await setup(t);
  const flow = await wt.start({ uid }, { as: "opal" });
  await flow.waitFor("WAITING");
  await wt.advanceClock("29d");
  t.equal((await flow.waitFor("WAITING")).status, "WAITING", "still waiting on day 29");
  t.ok(directory.has(dn));

  // Someone added them to a group and made them an owner meanwhile: both go with the entry.
  await directory.modify(group("sales"), [
    { operation: "add", attribute: "member", values: dn },
    { operation: "add", attribute: "owner", values: dn },
  ]);
  await wt.advanceClock("1d");
  const done = await flow.waitFor("COMPLETED");
  t.same(done.result, { outcome: "deleted", uid, dn, removedFrom: groupsBefore });
  t.notOk(directory.has(dn), "the entry is gone");
  t.same(directory.groupsOf(dn), [], "no group has them as a member");
  t.notOk(directory.values(group("sales"), "owner").includes(dn), "nor as an owner");
  t.equal(directory.values(group("sales"), "owner").length, 1, "the other owner stays");
});

t.test("a rehire ends the leaver: the account is restored, nothing deleted", async (t) => {
  const { wt, directory, dn, uid, groupsBefore } = await setup(t);
  const flow = await wt.start({ uid }, { as: "opal" });
  await flow.waitFor("WAITING");
  await wt.advanceClock("10d");
  // What HR's hook does for employee.hired with this uid (see ops/demo/hooks/hr.ts).
  await flow.answerRequest("hr", { rehired: true, eventId: "hr-9", department: "support" });
  const child = await flow.toHaveChild(defaultGroups);
  t.match((await child.waitFor("COMPLETED")).result, {
    member: dn,
    department: "support",
    groups: [group("support"), group("vpn-users")],
  });
  const done = await flow.waitFor("COMPLETED");
  t.match(done.result, { outcome: "rehired", uid, dn, removedFrom: groupsBefore });
  t.ok(directory.has(dn), "the entry stays");
  t.notOk(directory.values(dn, "employeeType").includes("disabled"), "the mark is gone");
  t.ok(directory.values(dn, "employeeType").length > 0, "its own employee type is kept");
  t.same(directory.groupsOf(dn).sort(), [group("support"), group("vpn-users")].sort());

  await wt.advanceClock("30d");
  t.ok(directory.has(dn), "and nothing deletes it later");
});

t.test("an answer that is no rehire is refused; an unknown uid errors", async (t) => {
  const { wt, uid } = await setup(t);
  const flow = await wt.start({ uid }, { as: "opal" });
  await flow.waitFor("WAITING");
  await t.rejects(flow.answerRequest("hr", { rehired: false, eventId: "hr-9" }), {
    code: "WF_TEST_MUTATION_REJECTED",
    cause: { code: "WF_VALIDATION" },
  });
  const ghost = await wt.start({ uid: "nobody-here" }, { as: "opal" });
  await t.rejects(ghost.waitFor("COMPLETED"), {
    code: "WF_TEST_INSTANCE_ERRORED",
    message: /HR_UNKNOWN_EMPLOYEE: no person with uid nobody-here/,
  });
});
