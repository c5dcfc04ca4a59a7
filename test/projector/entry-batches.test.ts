import { randomUUID } from "node:crypto";
import fc from "fast-check";
import t from "tap";
import { entriesProjection } from "../../projections/entries/index.ts";
import { entryVersionsProjection } from "../../projections/entry-versions/index.ts";
import {
  ENTRY_EVENT,
  entryStream,
  type EntryEventType,
  type EntryState,
  type RecordedOf,
} from "../../src/events/index.ts";
import { createProjectionSchema, tableIn } from "../../src/projector/schema.ts";
import type { AnyProjection } from "../../src/projector/index.ts";
import { testDatabase } from "../support/postgres.ts";

// The entry projections work a whole batch out at once and write it in a few statements. The
// tables a batch leaves must be the tables its events leave one batch each: this test applies
// random histories both ways and compares every row.

const UUIDS = [randomUUID(), randomUUID(), randomUUID()];
const TITLES = ["Engineer", "Manager", "Analyst"];

/** One step of an entry's history, before it is turned into an event. */
interface Step {
  readonly entry: number;
  readonly kind: "added" | "modified" | "renamed" | "deleted" | "snapshot";
  readonly title: number;
  readonly name: number;
  /** Minutes after the start; clocks of different sources may go backwards. */
  readonly minute: number;
  readonly stamped: boolean;
}

const step: fc.Arbitrary<Step> = fc.record({
  entry: fc.integer({ min: 0, max: UUIDS.length - 1 }),
  kind: fc.constantFrom("added", "modified", "renamed", "deleted", "snapshot"),
  title: fc.integer({ min: 0, max: TITLES.length - 1 }),
  name: fc.integer({ min: 0, max: 2 }),
  minute: fc.integer({ min: 0, max: 30 }),
  stamped: fc.boolean(),
});

const START = Date.UTC(2026, 10, 1);

function stateOf(uuid: string, s: Step): EntryState {
  const stamp = new Date(START + s.minute * 60_000).toISOString().replace(/[-:T]|\.\d+/g, "");
  return {
    dn: `uid=p${s.name},ou=people,dc=example,dc=org`,
    type: s.name === 2 ? null : "user",
    attributes: { uid: [`p${s.name}`], title: [TITLES[s.title]!] },
    operational: {
      entryUUID: [uuid],
      ...(s.stamped ? { createTimestamp: ["20261001000000Z"], modifyTimestamp: [stamp] } : {}),
    },
  };
}

function eventsOf(steps: readonly Step[]): RecordedOf<EntryEventType>[] {
  const versions = new Map<string, number>();
  return steps.map((s, index) => {
    const uuid = UUIDS[s.entry]!;
    const version = (versions.get(uuid) ?? 0) + 1;
    versions.set(uuid, version);
    const occurredAt = new Date(START + s.minute * 60_000);
    const state = stateOf(uuid, s);
    const base = {
      id: randomUUID(),
      streamId: entryStream(uuid),
      streamVersion: version,
      metadata: {},
      occurredAt,
      recordedAt: occurredAt,
      idempotencyKey: null,
      transactionId: String(1000 + index),
      position: index + 1,
    };
    if (s.kind === "snapshot") {
      return {
        ...base,
        type: ENTRY_EVENT.snapshot,
        data: { entryUUID: uuid, reason: "periodic", state },
      } as RecordedOf<EntryEventType>;
    }
    const deleted = s.kind === "deleted";
    return {
      ...base,
      type: ENTRY_EVENT[s.kind],
      data: {
        entryUUID: uuid,
        changeType: "modify",
        dn: state.dn,
        before: null,
        after: deleted ? null : state,
        patch: [],
        attributes: [],
        redacted: [],
      },
    } as RecordedOf<EntryEventType>;
  });
}

const projections: readonly [AnyProjection, readonly string[]][] = [
  [entriesProjection as AnyProjection, ["entries", "entry_values"]],
  [entryVersionsProjection as AnyProjection, ["entry_versions"]],
];

t.test("a batch leaves the tables its events leave one at a time", async (t) => {
  const db = await testDatabase(t);
  for (const [projection, tables] of projections) {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 12 }),
        async (steps, split): Promise<void> => {
          run++;
          const one = `batches_one_${run}`;
          const all = `batches_all_${run}`;
          await createProjectionSchema(db.pool, one, projection);
          await createProjectionSchema(db.pool, all, projection);
          const events = eventsOf(steps);
          const client = await db.pool.connect();
          try {
            for (const event of events) {
              await projection.apply([event], { tx: client, table: tableIn(one) });
            }
            // The same events in two batches, split anywhere.
            for (const part of [events.slice(0, split), events.slice(split)]) {
              if (part.length > 0)
                await projection.apply(part, { tx: client, table: tableIn(all) });
            }
          } finally {
            client.release();
          }
          for (const table of tables) {
            const rows = async (schema: string) =>
              (
                await db.pool.query(
                  `SELECT to_jsonb(r) AS row FROM ${tableIn(schema)(table)} AS r ORDER BY 1`,
                )
              ).rows.map((r: { row: unknown }) => JSON.stringify(r.row));
            const expected = await rows(one);
            const actual = await rows(all);
            if (JSON.stringify(actual) !== JSON.stringify(expected)) {
              throw new Error(
                `${projection.name}.${table}: one at a time ${JSON.stringify(expected)}, in batches ${JSON.stringify(actual)}`,
              );
            }
          }
          await db.pool.query(`DROP SCHEMA ${one} CASCADE; DROP SCHEMA ${all} CASCADE`);
        },
      ),
      { numRuns: 60 },
    );
    t.pass(`${projection.name}: 60 random histories agree`);
  }
});
