import t, { type Test } from "tap";
import { ENTRY_EVENT, entryStream } from "../../src/events/index.ts";
import {
  Projector,
  replayProjection,
  waitForProjection,
  type AnyProjection,
  type Projection,
} from "../../src/projector/index.ts";
import { EventStore, readHead } from "../../src/store/index.ts";
import { entriesProjection } from "../../projections/index.ts";
import type { Pool } from "../../src/db/index.ts";
import { EntryHistory } from "../support/entries.ts";
import { testDatabase } from "../support/postgres.ts";
import { compareWithReplay } from "../support/projection-replay.ts";

// A replay of `entries` folds the log in memory and writes the rows by COPY (`Projection.replay`,
// src/projector/replay-copy.ts), not batch by batch through `apply`: what it leaves must be
// exactly what the live projector left, whatever the history.

const people = "ou=people,dc=example,dc=org";
/** Values COPY's text format has to escape, and one longer than a value key. */
const AWKWARD = ["tab\there", "line\nbreak", "back\\slash", "cr\rhere", "\\N", "Ünïcödé ✓"];
const LONG = `A description longer than a value key: ${"x".repeat(260)}`;

/** A history of renames, deletes, an entry added again under its uuid, snapshots and a large group. */
async function writeHistory(history: EntryHistory, store: EventStore): Promise<void> {
  const uuids: string[] = [];
  for (let i = 0; i < 24; i++) {
    uuids.push(
      await history.add({
        dn: `uid=p${i},${people}`,
        type: i % 5 === 4 ? null : "user",
        attributes: {
          objectClass: ["inetOrgPerson"],
          uid: [`p${i}`],
          cn: [`Person ${i}`],
          sn: [`Number${i}`],
          description: [AWKWARD[i % AWKWARD.length]!, ...(i % 3 === 0 ? [LONG] : [])],
        },
      }),
    );
  }
  // The large entry: a group of 20,000 members, then one member fewer.
  const members = Array.from({ length: 20_000 }, (_, i) => `uid=m${i},${people}`);
  const group = await history.add({
    dn: "cn=everyone,ou=groups,dc=example,dc=org",
    type: "group",
    attributes: { objectClass: ["groupOfNames"], cn: ["everyone"], member: members },
  });
  // (As a snapshot: the test's patch between two lists of 20,000 recurses too deep.)
  const whole = history.states.get(group)!;
  const fewer = { ...whole, attributes: { ...whole.attributes, member: members.slice(1) } };
  await store.appendToStream(entryStream(group), [
    { type: ENTRY_EVENT.snapshot, data: { entryUUID: group, reason: "periodic", state: fewer } },
  ]);

  for (const [i, uuid] of uuids.entries()) {
    if (i % 2 === 0) await history.modify(uuid, { title: [`Title ${i}`], mail: [`p${i}@x.org`] });
    if (i % 3 === 0) {
      // Renamed, and with it another type (or none).
      await history.rename(uuid, `uid=q${i},${people}`, {
        type: i % 2 === 0 ? "admin" : null,
        attributes: { ...history.states.get(uuid)!.attributes, uid: [`q${i}`] },
      });
    }
    if (i % 4 === 1) await history.delete(uuid);
    if (i % 8 === 1) {
      // Added again under the same uuid: a new entry, made now.
      await history.add({
        uuid,
        dn: `uid=p${i},${people}`,
        type: "user",
        attributes: { objectClass: ["inetOrgPerson"], uid: [`p${i}`], cn: [`Again ${i}`] },
      });
    }
    if (i % 5 === 2) {
      // A periodic snapshot, the same entry and then a changed one.
      const state = history.states.get(uuid)!;
      const changed = { ...state, attributes: { ...state.attributes, sn: [`Snap${i}`] } };
      for (const snapshot of [state, changed]) {
        await store.appendToStream(entryStream(uuid), [
          {
            type: ENTRY_EVENT.snapshot,
            data: { entryUUID: uuid, reason: "periodic", state: snapshot },
          },
        ]);
      }
      history.states.set(uuid, changed);
    }
  }
  await history.modify(uuids[23]!, { title: ["Last"] });
}

/** The store, and a history written to it with the `entries` projection applying it live. */
async function liveHistory(t: Test): Promise<{ pool: Pool; store: EventStore }> {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const projector = await Projector.start({
    pool,
    projections: [entriesProjection as AnyProjection],
    log: { info() {}, warn() {}, error() {} },
    batchSize: 10,
  });
  t.teardown(() => projector.stop());
  await writeHistory(new EntryHistory(pool, store), store);
  await waitForProjection(pool, "entries", await readHead(pool), 60_000);
  return { pool, store };
}

/** `entries` whose replay may not go through `apply`. */
const foldOnly: AnyProjection = {
  ...(entriesProjection as AnyProjection),
  apply: async () => {
    throw new Error("the replay applied a batch through apply");
  },
};

t.test(
  "a replay of entries by COPY leaves the tables the live projector left, row for row",
  async (t) => {
    const { pool } = await liveHistory(t);

    // One write at the end (COPY straight into the new tables), then writes every 3 rows
    // (COPY into staging, then the merge; deletes of rows already written).
    for (const options of [{}, { foldRows: 3, batchSize: 5 }]) {
      const same = await compareWithReplay(pool, foldOnly, options);
      t.same(same.differences, [], `no table differs (${JSON.stringify(options)})`);
      t.equal(same.tables, 4, "entries, entry_values, entry_value_counts and _streams compared");
      t.equal(same.events, 66, "the replay read the whole log");
    }
    // Equal to the live rows, which hold each of them.
    const values = await pool.query<{ value: string }>(
      `SELECT DISTINCT attributes->'description'->>0 AS value FROM projection_entries.entries`,
    );
    const held = new Set(values.rows.map((row) => row.value));
    t.ok(
      AWKWARD.every((value) => held.has(value)),
      "the values COPY escapes were among those compared",
    );
  },
);

t.test("a rebuild of entries by COPY swaps in the tables it replaced", async (t) => {
  const { pool } = await liveHistory(t);
  const rows = async () => {
    const tables: Record<string, unknown> = {};
    for (const table of ["entries", "entry_values", "entry_value_counts", "_streams"]) {
      tables[table] = (
        await pool.query<{ row: string }>(
          `SELECT to_jsonb(r)::text AS row FROM projection_entries.${table} AS r ORDER BY 1`,
        )
      ).rows.map((r) => r.row);
    }
    return tables;
  };
  const live = await rows();
  t.equal((live.entries as unknown[]).length, 22, "the entries left by the history");
  await replayProjection({ pool, projection: foldOnly, batchSize: 7, foldRows: 5 });
  t.same(await rows(), live, "the rebuilt tables are the live ones");
});

/** Per stream, its Ticks and the last one's data; its replay adds held counts to stored ones. */
const counts: Projection<"Tick"> = {
  name: "counts",
  version: 1,
  handles: ["Tick"],
  tables: (table) => [
    `CREATE TABLE ${table("counts")} (stream_id text PRIMARY KEY, n integer NOT NULL, last jsonb NOT NULL)`,
  ],
  async apply(events, { tx, table }) {
    for (const event of events) {
      await tx.query(
        `INSERT INTO ${table("counts")} AS c VALUES ($1, 1, $2)
         ON CONFLICT (stream_id) DO UPDATE SET n = c.n + 1, last = EXCLUDED.last`,
        [event.streamId, JSON.stringify(event.data)],
      );
    }
  },
  replay: {
    tables: [
      {
        name: "counts",
        columns: ["stream_id", "n", "last"],
        key: ["stream_id"],
        merge: "n = t.n + EXCLUDED.n, last = EXCLUDED.last",
      },
    ],
    fold(events, rows) {
      for (const event of events) {
        const held = rows.get("counts", [event.streamId]);
        rows.put("counts", [event.streamId, ((held?.[1] as number) ?? 0) + 1, event.data]);
      }
    },
  },
};

t.test(
  "a replay merges what it holds into what it wrote before, by the plan's merge",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    const projector = await Projector.start({
      pool,
      projections: [counts as AnyProjection],
      log: { info() {}, warn() {}, error() {} },
    });
    t.teardown(() => projector.stop());
    for (let n = 0; n < 40; n++) {
      await store.appendToStream(`s-${n % 7}`, [
        { type: "Tick", data: { n, text: AWKWARD[n % 6] } },
      ]);
    }
    await waitForProjection(pool, "counts", await readHead(pool), 30_000);
    for (const options of [{}, { foldRows: 2, batchSize: 3 }]) {
      const same = await compareWithReplay(pool, counts as AnyProjection, options);
      t.same(same.differences, [], `no table differs (${JSON.stringify(options)})`);
      t.equal(same.events, 40);
    }
    const { rows } = await pool.query("SELECT sum(n)::int AS n FROM projection_counts.counts");
    t.same(rows, [{ n: 40 }], "every tick counted once");
  },
);
