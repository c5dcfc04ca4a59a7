import { randomUUID } from "node:crypto";
import fc from "fast-check";
import t from "tap";
import { entriesProjection } from "../../projections/entries/index.ts";
import {
  entryVersionsProjection,
  VALUE_SPAN_COLUMNS,
  valueSpanRows,
} from "../../projections/entry-versions/index.ts";
import { VALUE_KEY_LENGTH } from "../../projections/entries/index.ts";
import {
  ENTRY_EVENT,
  entryStream,
  type EntryEventType,
  type EntryState,
  type RecordedOf,
} from "../../src/events/index.ts";
import { createProjectionSchema, tableIn } from "../../src/projector/schema.ts";
import type { AnyProjection } from "../../src/projector/index.ts";
import { indexEntryValues } from "../../projections/entries/values.ts";
import { testDatabase } from "../support/postgres.ts";
import type { Pool } from "pg";

// The entry projections work a whole batch out at once and write it in a few statements. The
// tables a batch leaves must be the tables its events leave one batch each: this test applies
// random histories both ways and compares every row.

const UUIDS = [randomUUID(), randomUUID(), randomUUID()];
/** The long two are alike for longer than a key holds (`VALUE_KEY_LENGTH`) and then differ. */
const LONG = "Principal Engineer ".repeat(12);
const TITLES = ["Engineer", "Manager", "Analyst", `${LONG}of Data`, `${LONG}of Tools`];

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
    // Renamed, an entry may change type, or lose it.
    type: s.name === 2 ? null : s.name === 1 ? "admin" : "user",
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
  [entriesProjection as AnyProjection, ["entries", "entry_values", "entry_value_counts"]],
  [entryVersionsProjection as AnyProjection, ["entry_versions", "entry_version_values"]],
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
          if (projection === entriesProjection) await checkIndexedFresh(db.pool, all, run);
          else await checkSpansFresh(db.pool, all);
          await db.pool.query(`DROP SCHEMA ${one} CASCADE; DROP SCHEMA ${all} CASCADE`);
        },
      ),
      { numRuns: 60 },
    );
    t.pass(`${projection.name}: 60 random histories agree`);
  }
});

/**
 * `entry_values` is brought up to date by difference, batch after batch: what it holds after a
 * history must be what indexing the entries afresh gives, and `entry_value_counts` the count
 * of each type's and attribute's first values.
 */
async function checkIndexedFresh(pool: Pool, schema: string, run: number): Promise<void> {
  const fresh = `batches_fresh_${run}`;
  await createProjectionSchema(pool, fresh, entriesProjection as AnyProjection);
  const [from, to] = [tableIn(schema), tableIn(fresh)];
  await pool.query(`INSERT INTO ${to("entries")} SELECT * FROM ${from("entries")}`);
  const uuids = (await pool.query(`SELECT entry_uuid FROM ${to("entries")}`)).rows.map(
    (r: { entry_uuid: string }) => r.entry_uuid,
  );
  await indexEntryValues(pool, to, uuids);
  const rows = async (sql: string) =>
    JSON.stringify(
      (await pool.query(`SELECT to_jsonb(r) AS row FROM (${sql}) AS r ORDER BY 1`)).rows,
    );
  for (const [what, built, expected] of [
    [
      "entry_values",
      `SELECT * FROM ${from("entry_values")}`,
      `SELECT * FROM ${to("entry_values")}`,
    ],
    [
      "entry_value_counts",
      `SELECT * FROM ${from("entry_value_counts")}`,
      `SELECT type, attribute, count(*) AS entries FROM ${to("entry_values")}
        WHERE ordinal = 0 GROUP BY type, attribute`,
    ],
  ] as const) {
    const [actual, wanted] = [await rows(built), await rows(expected)];
    if (actual !== wanted) {
      throw new Error(`${what}: by difference ${actual}, afresh ${wanted}`);
    }
  }
  await pool.query(`DROP SCHEMA ${fresh} CASCADE`);
}

/**
 * `entry_version_values` holds spans of values, continued and ended batch after batch: they
 * must be the spans worked out afresh from every version at once (`valueSpanRows`).
 */
async function checkSpansFresh(pool: Pool, schema: string): Promise<void> {
  const table = tableIn(schema);
  const rows = async (sql: string) =>
    JSON.stringify(
      (
        await pool.query(`SELECT to_jsonb(r) AS row FROM (${sql}) AS r ORDER BY 1`, [
          VALUE_KEY_LENGTH,
        ])
      ).rows,
    );
  const built = await rows(
    `SELECT ${VALUE_SPAN_COLUMNS}, $1::int AS k FROM ${table("entry_version_values")}`,
  );
  const fresh = await rows(
    `SELECT ${VALUE_SPAN_COLUMNS}, $1::int AS k FROM (${valueSpanRows(table("entry_versions"), "$1")}) AS s`,
  );
  if (built !== fresh)
    throw new Error(`entry_version_values: by batches ${built}, afresh ${fresh}`);
  // Each version carries its entry's creation order: the position of its first version.
  const astray = await pool.query(
    `SELECT v.entry_uuid, v.version FROM ${table("entry_versions")} AS v
      WHERE v.created_position <> (SELECT min(f.position) FROM ${table("entry_versions")} AS f
                                    WHERE f.entry_uuid = v.entry_uuid)`,
  );
  if (astray.rowCount)
    throw new Error(`created_position: not the first version's ${JSON.stringify(astray.rows)}`);
}

t.test("a value held unchanged over many versions is one span", async (t) => {
  const db = await testDatabase(t);
  const schema = "spans_of_values";
  await createProjectionSchema(db.pool, schema, entryVersionsProjection as AnyProjection);
  const table = tableIn(schema);
  // Six versions of one entry: its name never changes, its title goes back and forth.
  const events = eventsOf(
    [0, 1, 0, 0, 2, 0].map((title, minute) => ({
      entry: 0,
      kind: minute === 0 ? "added" : "modified",
      title,
      name: 0,
      minute,
      stamped: false,
    })),
  );
  const client = await db.pool.connect();
  t.teardown(() => client.release());
  for (const event of events) {
    await entryVersionsProjection.apply([event], { tx: client, table });
  }
  const spans = async (attribute: string) =>
    (
      await client.query<{ value_key: string; from: number; to: number | null }>(
        `SELECT value_key,
                extract(epoch FROM valid_from - m.first)::int / 60 AS from,
                extract(epoch FROM valid_to - m.first)::int / 60 AS to
           FROM ${table("entry_version_values")},
                (SELECT min(valid_from) AS first FROM ${table("entry_versions")}) AS m
          WHERE attribute = $1 ORDER BY valid_from`,
        [attribute],
      )
    ).rows;
  t.equal((await spans("uid")).length, 1, "the name: one span over the six versions");
  t.same(
    (await spans("title")).map((span) => [span.value_key, span.from, span.to]),
    [
      ["engineer", 0, 1],
      ["manager", 1, 2],
      ["engineer", 2, 4],
      ["analyst", 4, 5],
      ["engineer", 5, null],
    ],
    "the title: a span per stretch it was held",
  );
});

t.test("entry_values rewrites only the values that changed", async (t) => {
  const db = await testDatabase(t);
  const schema = "values_by_difference";
  await createProjectionSchema(db.pool, schema, entriesProjection as AnyProjection);
  const table = tableIn(schema);
  const uuid = UUIDS[0]!;
  /** The entry snapshotted at `version`, with `title`, last modified at `modified`. */
  const snapshot = (version: number, title: string, modified: string) => {
    const [event] = eventsOf([
      { entry: 0, kind: "snapshot", title: 0, name: 0, minute: 0, stamped: true },
    ]);
    const state: EntryState = {
      dn: "uid=p0,ou=people,dc=example,dc=org",
      type: "user",
      attributes: { uid: ["p0"], title: [title], mail: ["p0@example.org"] },
      operational: { entryUUID: [uuid], modifyTimestamp: [modified] },
    };
    return {
      ...event!,
      streamVersion: version,
      position: version,
      data: { entryUUID: uuid, reason: "periodic", state },
    } as RecordedOf<EntryEventType>;
  };
  const client = await db.pool.connect();
  t.teardown(() => client.release());
  const apply = (event: RecordedOf<EntryEventType>) =>
    entriesProjection.apply([event], { tx: client, table });
  /** Each row's attribute and the transaction that wrote it. */
  const written = async () =>
    new Map(
      (
        await client.query<{ attribute: string; xmin: string }>(
          `SELECT attribute, xmin::text FROM ${table("entry_values")} WHERE entry_uuid = $1`,
          [uuid],
        )
      ).rows.map((r) => [r.attribute, r.xmin]),
    );

  await apply(snapshot(1, "Engineer", "20261101000000Z"));
  const first = await written();
  t.same([...first.keys()].sort(), ["", "entryUUID", "mail", "modifyTimestamp", "title", "uid"]);

  await apply(snapshot(2, "Engineer", "20261101000000Z"));
  t.same(await written(), first, "the same entry again: no row written");

  await apply(snapshot(3, "Manager", "20261102000000Z"));
  const third = await written();
  const rewritten = [...third].filter(([name, xmin]) => first.get(name) !== xmin);
  t.same(
    rewritten.map(([name]) => name).sort(),
    ["modifyTimestamp", "title"],
    "only the title and the time it changed",
  );
  const title = await client.query(
    `SELECT value_key FROM ${table("entry_values")} WHERE entry_uuid = $1 AND attribute = 'title'`,
    [uuid],
  );
  t.same(title.rows, [{ value_key: "manager" }]);
});

t.test("a one-member change to a group of 20,000 members ends one span, in time", async (t) => {
  const db = await testDatabase(t);
  const schema = "large_group_versions";
  await createProjectionSchema(db.pool, schema, entryVersionsProjection as AnyProjection);
  const table = tableIn(schema);
  const uuid = randomUUID();
  const members = Array.from({ length: 20_000 }, (_, i) => `uid=m${i},ou=people,dc=example,dc=org`);
  const group = (member: string[]): EntryState => ({
    dn: "cn=everyone,ou=groups,dc=example,dc=org",
    type: "group",
    attributes: { cn: ["everyone"], member },
    operational: { entryUUID: [uuid] },
  });
  const at = (minute: number) => new Date(START + minute * 60_000);
  const base = (version: number) => ({
    id: randomUUID(),
    streamId: entryStream(uuid),
    streamVersion: version,
    metadata: {},
    occurredAt: at(version),
    recordedAt: at(version),
    idempotencyKey: null,
    transactionId: String(1000 + version),
    position: version,
  });
  const snapshot = {
    ...base(1),
    type: ENTRY_EVENT.snapshot,
    data: { entryUUID: uuid, reason: "import", state: group(members) },
  } as RecordedOf<EntryEventType>;
  const removed = {
    ...base(2),
    type: ENTRY_EVENT.modified,
    data: {
      entryUUID: uuid,
      changeType: "modify",
      dn: group([]).dn,
      before: group(members),
      after: group(members.filter((_, i) => i !== 7)),
      patch: [{ op: "remove", path: "/member/7" }],
      attributes: ["member"],
      redacted: [],
    },
  } as RecordedOf<EntryEventType>;
  const client = await db.pool.connect();
  t.teardown(() => client.release());
  await client.query("BEGIN");
  await entryVersionsProjection.apply([snapshot], { tx: client, table });
  const started = performance.now();
  await entryVersionsProjection.apply([removed], { tx: client, table });
  const ms = performance.now() - started;
  await client.query("COMMIT");
  // Matched span by span (an open span looked up among the batch's for each), this took 88 s
  // at 10,000 members and grows with their square; by hash joins, a second or two. The bound
  // is far from both, for a loaded machine.
  t.ok(ms < 60_000, `applied in ${Math.round(ms)} ms`);
  const spans = await client.query<{ ended: number; open: number }>(
    `SELECT count(*) FILTER (WHERE valid_to IS NOT NULL)::int AS ended,
            count(*) FILTER (WHERE valid_to IS NULL)::int AS open
       FROM ${table("entry_version_values")} WHERE attribute = 'member'`,
  );
  t.same(spans.rows[0], { ended: 1, open: 19_999 }, "the member removed: its span ended");
  await checkSpansFresh(db.pool, schema);
});

t.test("a change to one person among many reads that person's open spans only", async (t) => {
  const db = await testDatabase(t);
  const schema = "many_people_versions";
  await createProjectionSchema(db.pool, schema, entryVersionsProjection as AnyProjection);
  const table = tableIn(schema);
  const person = (uuid: string, title: string): EntryState => ({
    dn: `uid=${uuid},ou=people,dc=example,dc=org`,
    type: "user",
    attributes: { uid: [uuid], cn: [`Person ${uuid}`], title: [title], mail: [`${uuid}@x.org`] },
    operational: { entryUUID: [uuid] },
  });
  const at = (minute: number) => new Date(START + minute * 60_000);
  const event = (uuid: string, version: number, position: number) => ({
    id: randomUUID(),
    streamId: entryStream(uuid),
    streamVersion: version,
    metadata: {},
    occurredAt: at(version),
    recordedAt: at(version),
    idempotencyKey: null,
    transactionId: String(1000 + position),
    position,
  });
  const uuids = Array.from({ length: 20_000 }, () => randomUUID());
  const snapshots = uuids.map(
    (uuid, i) =>
      ({
        ...event(uuid, 1, i + 1),
        type: ENTRY_EVENT.snapshot,
        data: { entryUUID: uuid, reason: "import", state: person(uuid, "Engineer") },
      }) as RecordedOf<EntryEventType>,
  );
  const uuid = uuids[7]!;
  const modified = {
    ...event(uuid, 2, uuids.length + 1),
    type: ENTRY_EVENT.modified,
    data: {
      entryUUID: uuid,
      changeType: "modify",
      dn: person(uuid, "Manager").dn,
      before: person(uuid, "Engineer"),
      after: person(uuid, "Manager"),
      patch: [{ op: "replace", path: "/title/0", value: "Manager" }],
      attributes: ["title"],
      redacted: [],
    },
  } as RecordedOf<EntryEventType>;
  const client = await db.pool.connect();
  t.teardown(() => client.release());
  await client.query("BEGIN");
  await entryVersionsProjection.apply(snapshots, { tx: client, table });
  await client.query("COMMIT");
  await client.query(`ANALYZE ${table("entry_version_values")}`);
  await client.query("BEGIN");
  // This transaction's reads of the table so far (PostgreSQL's counts, not a clock).
  const read = async () =>
    (
      await client.query<{ rows: number }>(
        `SELECT (seq_tup_read + coalesce(idx_tup_fetch, 0))::int AS rows
           FROM pg_stat_xact_user_tables WHERE schemaname = $1 AND relname = 'entry_version_values'`,
        [schema],
      )
    ).rows[0]?.rows ?? 0;
  const before = await read();
  await entryVersionsProjection.apply([modified], { tx: client, table });
  const rows = (await read()) - before;
  await client.query("COMMIT");
  // Matched by hash joins only (as a large group's change is), every open span of the
  // table's 100,000 was read: at 100,000 people, 6 to 10 s a batch.
  t.ok(rows < 100, `${rows} rows of entry_version_values read for one person's change`);
  const spans = await db.pool.query<{ value_key: string; open: boolean }>(
    `SELECT value_key, valid_to IS NULL AS open FROM ${table("entry_version_values")}
      WHERE entry_uuid = $1 AND attribute = 'title' ORDER BY valid_from`,
    [uuid],
  );
  t.same(
    spans.rows,
    [
      { value_key: "engineer", open: false },
      { value_key: "manager", open: true },
    ],
    "the old title's span ended, the new one's open",
  );
  await checkSpansFresh(db.pool, schema);
});
