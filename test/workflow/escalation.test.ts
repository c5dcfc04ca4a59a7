import t from "tap";
import { z } from "zod";
import { bind, defineWorkflow, managerOf, type WorkflowDirectory } from "annal";
import { fixture, workflowTest } from "annal/testing";

t.setTimeout(120_000);
// Assigning undefined would set the text "undefined": only where the suite gave a server.
if (process.env.ANNAL_TEST_POSTGRES_URL)
  process.env.DATABASE_URL ??= process.env.ANNAL_TEST_POSTGRES_URL;

const OWNER = "uid=owner,ou=people,dc=example,dc=org";
const MANAGER = "uid=boss,ou=people,dc=example,dc=org";
const OPERATORS = "cn=operators,ou=roles,dc=example,dc=org";
const CALENDAR = { name: "office", timeZone: "Europe/Berlin" };

/** A directory whose only answer is the owner's manager (or none). */
function directory(manager: string | null): Partial<WorkflowDirectory> {
  return {
    base: "dc=example,dc=org",
    async get(dn: string) {
      return dn === OWNER
        ? {
            dn,
            attributes:
              manager === null ? {} : ({ manager: [manager] } as Record<string, string[]>),
          }
        : undefined;
    },
  };
}

const request = defineWorkflow({
  name: "request",
  version: 1,
  parameters: z.object({}),
  bindings: { directory: bind.directory() },
  async run(flow) {
    const { answer, by } = await flow.dialog({
      name: "approve",
      assignees: [OWNER],
      schema: z.object({ approved: z.boolean() }),
      escalation: {
        levels: [
          { after: "1bd", assignees: managerOf(OWNER) },
          { after: "1bd", assignees: [OPERATORS], mode: "add" },
        ],
        final: { after: "1bd", answer: { approved: false } },
      },
    });
    return { approved: answer.approved, by: by.name };
  },
});

async function setup(t: { teardown(fn: () => unknown): void }, manager: string | null = MANAGER) {
  const wt = await workflowTest({
    workflows: [request],
    calendars: [CALENDAR],
    accounts: { owner: { dn: OWNER }, boss: { dn: MANAGER }, olga: { principals: [OPERATORS] } },
    fixtures: [fixture("directory", directory(manager))],
  });
  t.teardown(() => wt.close());
  // Monday 11 January 2027, 10:00 in Berlin.
  await wt.advanceClockTo("2027-01-11T09:00:00Z");
  return wt;
}

type Dialog = {
  kind: "dialog";
  assignees: readonly string[];
  until: string | null;
  escalation?: {
    reached: number;
    levels: { at: string; assignees?: readonly string[]; error?: unknown }[];
  };
};
const dialogOf = (state: { calls: ReadonlyMap<number, unknown> }) =>
  [...state.calls.values()].find((call) => (call as Dialog).kind === "dialog") as Dialog;

t.test(
  "nobody answers: the owner, then the manager, then the operators too, then the final answer",
  async (t) => {
    const wt = await setup(t);
    const flow = await wt.start({}, { as: "requester" });
    let dialog = dialogOf(await flow.waitFor("WAITING"));
    t.match(
      dialog,
      {
        assignees: [OWNER],
        until: /^2027-01-14T09:00:00/,
        escalation: {
          reached: 0,
          levels: [
            { at: /^2027-01-12T09:00:00/, mode: "reassign" },
            { at: /^2027-01-13T09:00:00/, mode: "add" },
          ],
        },
      },
      "every moment of the chain is set when the dialog opens, in working days",
    );

    await wt.advanceClock("1d1m");
    dialog = dialogOf(await flow.waitFor((s) => dialogOf(s).escalation!.reached === 1));
    t.same(dialog.assignees, [MANAGER], "the owner's manager, read from the directory then");
    await t.rejects(
      flow.completeActivity("approve", { approved: true }, { as: "owner" }),
      {
        code: "WF_TEST_MUTATION_REJECTED",
        cause: { code: "WF_NOT_FOUND" },
      },
      "the owner is no longer asked (nor sees the instance)",
    );

    await wt.advanceClock("1d");
    dialog = dialogOf(await flow.waitFor((s) => dialogOf(s).escalation!.reached === 2));
    t.same(dialog.assignees, [MANAGER, OPERATORS], "the operators are added");

    await wt.advanceClock("1d");
    const done = await flow.waitFor("COMPLETED");
    t.same(done.result, { approved: false, by: "the escalation chain" });
  },
);

t.test("an answer at a level ends the chain; who answered is recorded", async (t) => {
  const wt = await setup(t);
  const flow = await wt.start({}, { as: "requester" });
  await flow.waitFor("WAITING");
  await wt.advanceClock("1d1m");
  await flow.waitFor((s) => dialogOf(s).escalation!.reached === 1);
  await flow.completeActivity("approve", { approved: true }, { as: "boss" });
  t.same((await flow.waitFor("COMPLETED")).result, { approved: true, by: "boss" });
});

t.test("a level that finds nobody keeps who was asked, and says why", async (t) => {
  const wt = await setup(t, null);
  const flow = await wt.start({}, { as: "requester" });
  await flow.waitFor("WAITING");
  await wt.advanceClock("1d1m");
  const dialog = dialogOf(await flow.waitFor((s) => dialogOf(s).escalation!.reached === 1));
  t.same(dialog.assignees, [OWNER]);
  t.match(dialog.escalation!.levels[0], { error: { message: /found nobody/ } });
  await flow.completeActivity("approve", { approved: true }, { as: "owner" });
  t.same((await flow.waitFor("COMPLETED")).result, { approved: true, by: "owner" });
});

/** A definition whose dialog's escalation is `escalation`, as a file might hold it. */
function malformed(name: string, escalation: unknown, assignees: unknown = [OWNER]) {
  return defineWorkflow({
    name,
    version: 1,
    parameters: z.object({}),
    async run(flow) {
      await flow.dialog({
        name: "approve",
        assignees: assignees as string[],
        schema: z.object({ approved: z.boolean() }),
        escalation: escalation as never,
      });
    },
  });
}

t.test(
  "a malformed escalation ends the instance with WF_OPTIONS_INVALID naming the option and its shape, not a TypeError",
  async (t) => {
    const cases: [unknown, unknown, RegExp][] = [
      [
        [{ after: "1bd", assignees: [OPERATORS] }],
        [OWNER],
        /^flow\.dialog: escalation is a list, not an object \(put the levels in \{ levels: \[\.\.\.\] \}\)$/,
      ],
      [{ levels: { after: "1bd" } }, [OWNER], /escalation\.levels is an object, not a list/],
      [{ level: [] }, [OWNER], /escalation has no option "level" \(it takes levels, final\)/],
      [
        { levels: [{ after: "1bd", assignees: OPERATORS }] },
        [OWNER],
        /escalation\.levels\[0\]\.assignees is a string: it takes a list of principals/,
      ],
      [
        { levels: [{ assignees: [OPERATORS] }] },
        [OWNER],
        /escalation\.levels\[0\]\.after is missing/,
      ],
      [
        { levels: [{ after: "1bd", assignees: [OPERATORS], mode: "replace" }] },
        [OWNER],
        /mode is "replace": it takes "reassign" or "add"/,
      ],
      [{ levels: [], final: "1bd" }, [OWNER], /escalation\.final is a string, not an object/],
      [undefined, OWNER, /^flow\.dialog: assignees is one text, not a list$/],
    ];
    const workflows = cases.map(([escalation, assignees], index) =>
      malformed(`malformed-${index}`, escalation, assignees),
    );
    const wt = await workflowTest({
      workflows,
      calendars: [CALENDAR],
      accounts: { owner: { dn: OWNER } },
      fixtures: [],
    });
    t.teardown(() => wt.close());
    for (const [index, [, , message]] of cases.entries()) {
      const flow = await wt.start({}, { as: "requester", definition: `malformed-${index}` });
      const ended = await flow.waitFor("ERRORED");
      t.match(
        ended.error,
        { code: "WF_OPTIONS_INVALID", message },
        `case ${index}: ${String(message)}`,
      );
      t.notMatch(ended.error?.message, /TypeError|Cannot read/);
    }
  },
);
