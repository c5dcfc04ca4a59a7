import { rmSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { createToken } from "../../src/auth/index.ts";
import { advanceDatabaseClock } from "../../src/workflow/index.ts";
import { startAccountsAnnal } from "../support/accounts.ts";
import { eventually } from "../support/eventually.ts";
import { writeDefinition } from "../support/workflow.ts";

t.setTimeout(300_000);

const REPO = path.resolve(import.meta.dirname, "../..");

/**
 * A dialog's escalation chain over GraphQL, against annal as `annal start` runs it: the inbox
 * and the instance show the chain's moments and where it stands, and once the database's
 * clock passes a level, the dialog leaves the old assignee's inbox for the new one's.
 */
const CHAIN = `
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "chain",
  version: 1,
  parameters: z.object({ first: z.string(), then: z.string(), also: z.string() }),
  async run(flow, { first, then, also }) {
    const { answer } = await flow.dialog({
      name: "approve",
      assignees: [first],
      schema: z.object({ approved: z.boolean() }),
      escalation: {
        levels: [
          { after: "1h", assignees: [then] },
          { after: "1h", assignees: [also], mode: "add" },
        ],
        final: { after: "1h", answer: { approved: false } },
      },
    });
    return answer;
  },
});
`;

const FIELDS = `id state assignees until escalation {
  reached levels { at mode assignees reachedAt error { code message } } final { at answer }
}`;

t.test("the inbox and the instance show a dialog's escalation chain", async (t) => {
  const dir = path.join(REPO, ".tap/fixtures", `graphql-escalation-${process.pid}`);
  writeDefinition(dir, "chain.ts", CHAIN);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const app = await startAccountsAnnal(t, {
    provider: "test",
    extraToml: `[workflows]\ndir = "${dir}"\ntimerInterval = "200ms"\n`,
  });
  const bearer = async (name: string) => {
    const { token } = await createToken(app.db.pool, app.store, { name, access: [] });
    return { authorization: `Bearer ${token}` };
  };
  const [alice, bob, carol, dave] = await Promise.all(
    ["alice", "bob", "carol", "dave"].map(bearer),
  );
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const gql = async (who: Record<string, string>, query: string, variables?: any) => {
    const answer = await app.graphql(query, who, variables);
    t.notOk(answer.body.errors, "no errors");
    return answer.body.data;
  };
  const inbox = async (who: Record<string, string>) =>
    (await gql(who, `{ myDialogs { nodes { ${FIELDS} } } }`)).myDialogs.nodes as {
      id: string;
      until: string;
      escalation: Chain;
    }[];

  const started = await gql(
    alice!,
    `mutation($p: JSON!) { startWorkflow(name: "chain", parameters: $p) { id } }`,
    { p: { first: "service:bob", then: "service:carol", also: "service:dave" } },
  );
  const id = started.startWorkflow.id as string;
  const [opened] = await eventually(
    async () => {
      const nodes = await inbox(bob!);
      return nodes.length > 0 ? nodes : undefined;
    },
    { what: "the dialog in bob's inbox" },
  );
  t.match(opened, {
    id: `${id}.1`,
    state: "pending",
    assignees: ["service:bob"],
    escalation: {
      reached: 0,
      levels: [
        { mode: "reassign", assignees: null, reachedAt: null, error: null },
        { mode: "add", assignees: null, reachedAt: null, error: null },
      ],
      final: { answer: { approved: false } },
    },
  });
  const chain = opened!.escalation;
  const [first, second] = chain.levels.map((level) => Date.parse(level.at));
  t.equal(second! - first!, 3_600_000, "each level an hour after the one before");
  t.equal(Date.parse(chain.final!.at) - second!, 3_600_000, "the end an hour after the last");
  t.equal(opened!.until, chain.final!.at, "the end is the deadline");
  t.same(await inbox(carol!), [], "nothing for carol before the first level");

  // The database's clock passes the first level: the engine reassigns to carol.
  await advanceDatabaseClock(app.db.pool, 3_600_000 + 1_000);
  const reassigned = await eventually(
    async () => {
      const nodes = await inbox(carol!);
      return nodes.length > 0 ? nodes : undefined;
    },
    { what: "the dialog in carol's inbox" },
  );
  t.match(reassigned, [
    {
      id: `${id}.1`,
      assignees: ["service:carol"],
      escalation: {
        reached: 1,
        levels: [
          { assignees: ["service:carol"], reachedAt: /^\d{4}-/, error: null },
          { assignees: null, reachedAt: null },
        ],
      },
    },
  ]);
  t.same(await inbox(bob!), [], "bob's inbox no longer has it (reassigned)");
  t.same(await inbox(dave!), [], "dave is not asked yet");

  // The instance shows the same chain on its dialog.
  const instance = await gql(
    alice!,
    `query($id: ID!) { instance(id: $id) { dialogs { ${FIELDS} } } }`,
    { id },
  );
  t.match(instance.instance.dialogs, [
    { id: `${id}.1`, escalation: { reached: 1, levels: [{ assignees: ["service:carol"] }, {}] } },
  ]);

  // The second level adds dave beside carol; the end answers for nobody.
  await advanceDatabaseClock(app.db.pool, 3_600_000);
  const added = await eventually(
    async () => {
      const nodes = await inbox(dave!);
      return nodes.length > 0 ? nodes : undefined;
    },
    { what: "the dialog in dave's inbox" },
  );
  t.match(added, [
    {
      assignees: ["service:carol", "service:dave"],
      escalation: { reached: 2, levels: [{}, { assignees: ["service:carol", "service:dave"] }] },
    },
  ]);
  t.equal((await inbox(carol!)).length, 1, "carol still has it");

  await advanceDatabaseClock(app.db.pool, 3_600_000);
  const ended = await eventually(
    async () => {
      const body = await gql(
        alice!,
        `query($id: ID!) { instance(id: $id) { state result dialogs { ${FIELDS} answeredBy { id } } } }`,
        { id },
      );
      return body.instance.state === "COMPLETED" ? body.instance : undefined;
    },
    { what: "the chain's final answer" },
  );
  t.match(ended, {
    result: { approved: false },
    dialogs: [{ state: "completed", answeredBy: { id: "escalation" }, escalation: { reached: 2 } }],
  });
  // The inbox reads the projection, which catches up with the log.
  await eventually(async () => ((await inbox(dave!)).length === 0 ? true : undefined), {
    what: "the answered dialog out of dave's inbox",
  });
});

interface Chain {
  levels: { at: string }[];
  final: { at: string } | null;
}
