import t from "tap";
import { fixture, workflowTest } from "annal/testing";
import defaultGroups from "../../../ops/demo/workflows/default-groups.ts";
import joiner from "../../../ops/demo/workflows/joiner.ts";
import { DemoDirectory, group, outboxFixture } from "./fixtures.ts";

t.setTimeout(120_000);
// The suite's PostgreSQL (the driver makes a database of its own on it for each test); run
// alone, without one, the driver starts an embedded PostgreSQL of its own.
if (process.env.ANNAL_TEST_POSTGRES_URL) {
  process.env.DATABASE_URL ??= process.env.ANNAL_TEST_POSTGRES_URL;
}

const ADA = {
  uid: "alovelace",
  givenName: "Ada",
  sn: "Lovelace",
  mail: "alovelace@example.org",
  title: "Software Engineer",
  department: "Engineering",
};
const ADA_DN = "uid=alovelace,ou=engineering,ou=people,dc=example,dc=org";

async function setup(t: { teardown(fn: () => unknown): void }) {
  const directory = new DemoDirectory();
  const tickets = outboxFixture("tickets");
  const wt = await workflowTest({
    workflows: [joiner, defaultGroups],
    accounts: { opal: { access: ["operator"] } },
    fixtures: [fixture("directory", directory), tickets.fixture],
  });
  t.teardown(() => wt.close());
  return { wt, directory, tickets };
}

t.test(
  "a joiner gets an entry, the department's default groups and, once IT answers, a laptop",
  async (t) => {
    const { wt, directory, tickets } = await setup(t);
    const flow = await wt.start(ADA, { as: "opal" });

    // The child adds the default groups: Engineering's are engineering and vpn-users.
    const child = await flow.toHaveChild(defaultGroups);
    t.same((await child.waitFor("COMPLETED")).result, {
      member: ADA_DN,
      department: "Engineering",
      groups: [group("engineering"), group("vpn-users")],
      added: [group("engineering"), group("vpn-users")],
    });
    t.same(directory.values(ADA_DN, "cn"), ["Ada Lovelace"]);
    t.same(directory.values(ADA_DN, "mail"), ["alovelace@example.org"]);
    t.same(directory.values(ADA_DN, "title"), ["Software Engineer"]);
    t.same(directory.values(ADA_DN, "ou"), ["Engineering"]);
    t.same(directory.groupsOf(ADA_DN), [group("engineering"), group("vpn-users")]);

    // Then the laptop: a ticket is sent once, with the key its answer comes back with.
    const waiting = await flow.waitFor((s) =>
      [...s.calls.values()].some((c) => c.kind === "request" && c.state === "pending"),
    );
    t.equal(tickets.sent.length, 1);
    t.match(tickets.sent[0], {
      payload: { type: "laptop", for: { uid: "alovelace", name: "Ada Lovelace" } },
    });
    t.match(
      [...waiting.calls.values()].find((c) => c.kind === "request"),
      { name: "tickets", key: tickets.sent[0]!.key },
    );
    await t.rejects(flow.answerRequest("tickets", { status: "lost" }), {
      code: "WF_TEST_MUTATION_REJECTED",
      cause: { code: "WF_VALIDATION" },
    });
    await flow.answerRequest("tickets", { status: "done", asset: "LT-0042" });
    t.same((await flow.waitFor("COMPLETED")).result, {
      uid: "alovelace",
      dn: ADA_DN,
      groups: [group("engineering"), group("vpn-users")],
      laptop: { status: "done", asset: "LT-0042" },
    });
  },
);

t.test("no answer from IT in 14 days: the joiner completes without a laptop", async (t) => {
  const { wt } = await setup(t);
  const flow = await wt.start({ ...ADA, cn: "Augusta Ada King" }, { as: "opal" });
  await flow.waitFor((s) =>
    [...s.calls.values()].some((c) => c.kind === "request" && c.state === "pending"),
  );
  await wt.advanceClock("14d");
  t.match((await flow.waitFor("COMPLETED")).result, { laptop: { status: "no answer" } });
});

t.test("a joiner to no department, or with a uid taken, errors and changes nothing", async (t) => {
  const { wt, directory } = await setup(t);
  const lost = await wt.start({ ...ADA, department: "Research" }, { as: "opal" });
  await t.rejects(lost.waitFor("COMPLETED"), {
    code: "WF_TEST_INSTANCE_ERRORED",
    message: /DEMO_UNKNOWN_DEPARTMENT: there is no department Research/,
  });
  const taken = await wt.start({ ...ADA, uid: "prossi", department: "sales" }, { as: "opal" });
  await t.rejects(taken.waitFor("COMPLETED"), {
    code: "WF_TEST_INSTANCE_ERRORED",
    message: /DEMO_UID_TAKEN: uid prossi is taken by uid=prossi,ou=engineering/,
  });
  t.same(directory.writes, []);
  await t.rejects(wt.start({ ...ADA, uid: "Ada Lovelace" }, { as: "opal" }), {
    code: "WF_TEST_MUTATION_REJECTED",
    cause: { code: "WF_VALIDATION" },
  });
});
