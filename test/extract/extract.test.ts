import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import t, { type Test } from "tap";
import { extractToFolder, readManifest } from "../../src/extract/index.ts";
import { ENTRY_VERSIONS } from "../../projections/entry-versions/index.ts";
import { addPeople, GROUPS, PEOPLE, restHarness, TEST_SCHEMA } from "../rest/fixtures/harness.ts";
import { duckdb, literal } from "../support/duckdb.ts";

/**
 * `annal extract` read back by DuckDB, the independent reader, and checked against the REST
 * channel: the count of entries at a moment, a person's versions, a group's members during an
 * interval; then a second run, which writes only what changed and leaves a glob seeing every
 * row once.
 */
t.setTimeout(300_000);

const q = encodeURIComponent;
const at = (month: number, day = 1) => new Date(Date.UTC(2026, month - 1, day, 9));

const harness = await restHarness(t);
const { history, pool, get } = harness;
const db = await duckdb(t);

const ids = await addPeople(history, at(1));
const staffDn = `cn=staff,${GROUPS}`;
const person = (uid: string) => `uid=${uid},${PEOPLE}`;
const staff = await history.add(
  {
    dn: staffDn,
    type: "group",
    attributes: {
      objectClass: ["groupOfNames"],
      cn: ["staff"],
      member: [person("alice"), person("bob")],
    },
  },
  { at: at(1) },
);
await history.modify(ids.alice!, { title: ["Director"] }, { at: at(2) });
await history.modify(staff, (a) => ({ ...a, member: [...a.member!, person("carol")] }), {
  at: at(3),
});
await history.modify(
  staff,
  (a) => ({ ...a, member: a.member!.filter((m) => m !== person("bob")) }),
  {
    at: at(4),
  },
);
await history.delete(ids.dave!, { at: at(5) });
await history.settled();

const dir = await mkdtemp(path.join(tmpdir(), "annal-extract-"));
const glob = (table: string) =>
  `read_parquet(${literal(path.join(dir, table, "*.parquet"))}, union_by_name = true)`;

const first = await extractToFolder(pool, { dir, schema: TEST_SCHEMA });

/** Users valid at `moment` by DuckDB over the SCD2 extract, and by the REST channel. */
async function countsAt(moment: Date): Promise<[number, number]> {
  const [row] = await db.rows(
    `SELECT count(*)::INTEGER AS n FROM ${glob("entry_versions")}
      WHERE type = 'user' AND valid_from <= TIMESTAMPTZ ${literal(moment.toISOString())}
        AND (valid_to IS NULL OR valid_to > TIMESTAMPTZ ${literal(moment.toISOString())})`,
  );
  const rest = await get(`/api/entries/users?at=${q(moment.toISOString())}&include=count`);
  return [row!.n as number, (rest.json() as { count: number }).count];
}

/** The people who were members of staff at some time in [from, to), by DuckDB and by REST. */
async function membersDuring(from: Date, to: Date): Promise<[string[], string[]]> {
  const duck = await db.rows(
    `SELECT DISTINCT member_dn FROM ${glob("memberships")}
      WHERE group_dn = ${literal(staffDn)}
        AND valid_from < TIMESTAMPTZ ${literal(to.toISOString())}
        AND (valid_to IS NULL OR valid_to > TIMESTAMPTZ ${literal(from.toISOString())})
      ORDER BY 1`,
  );
  const rest: string[] = [];
  for (const uid of ["alice", "bob", "carol", "dave", "erin"]) {
    const answer = await get(
      `/api/entries/users/${ids[uid]}/memberships?during=${q(`${from.toISOString()}/${to.toISOString()}`)}`,
    );
    const nodes = (answer.json() as { nodes: { group: { dn: string } }[] }).nodes;
    if (nodes.some((node) => node.group.dn === staffDn)) rest.push(person(uid));
  }
  return [duck.map((row) => row.member_dn as string), rest.sort()];
}

/** Alice's versions by DuckDB, each checked against REST's answer at its start. */
async function aliceVersions(t: Test, expected: string[]) {
  const versions = await db.rows(
    `SELECT valid_from::VARCHAR AS valid_from, title FROM ${glob("entry_versions")}
      WHERE entry_uuid = ${literal(ids.alice!)} ORDER BY version`,
  );
  t.same(
    versions.map((v) => (v.title as string[])[0]),
    expected,
    "alice's titles, version by version",
  );
  for (const version of versions) {
    const moment = new Date((version.valid_from as string).replace(" ", "T").replace(/\+00$/, "Z"));
    const rest = await get(`/api/entries/users/${ids.alice}?at=${q(moment.toISOString())}`);
    t.same(
      (rest.json() as { title: string[] }).title,
      version.title,
      `REST at ${moment.toISOString()} answers the version`,
    );
  }
  const changes = await get(`/api/entries/users/${ids.alice}/changes`);
  t.equal(
    (changes.json() as { nodes: unknown[] }).nodes.length,
    versions.length,
    "one version a change",
  );
}

t.test("the first run writes every table, typed, compressed, with statistics", async (t) => {
  t.equal(first.run, 1);
  t.same(first.removed, []);
  const manifest = await readManifest(dir);
  t.equal(manifest?.run, 1);
  for (const table of ["events", "changes", "entry_versions", "memberships"]) {
    const files = await readdir(path.join(dir, table));
    t.ok(files.length > 0 && files.every((f) => f.endsWith(".parquet")), `${table}: ${files}`);
  }
  const columns = Object.fromEntries(
    (await db.rows(`DESCRIBE SELECT * FROM ${glob("entry_versions")}`)).map((row) => [
      row.column_name,
      row.column_type,
    ]),
  );
  t.match(columns, {
    entry_uuid: "UUID",
    valid_from: "TIMESTAMP WITH TIME ZONE",
    valid_to: "TIMESTAMP WITH TIME ZONE",
    telephoneNumber: "VARCHAR[]",
    uidNumber: "BIGINT",
    accountActive: "BOOLEAN",
    attributes_other: "JSON",
  });
  const events = Object.fromEntries(
    (await db.rows(`DESCRIBE SELECT * FROM ${glob("events")}`)).map((row) => [
      row.column_name,
      row.column_type,
    ]),
  );
  t.match(events, {
    occurred_at: "TIMESTAMP WITH TIME ZONE",
    data: "JSON",
    transaction_id: "BIGINT",
  });
  const metadata = await db.rows(
    `SELECT DISTINCT compression, stats_min_value IS NOT NULL AS stats
       FROM parquet_metadata(${literal(path.join(dir, "entry_versions", "*.parquet"))})
      WHERE path_in_schema = 'valid_from'`,
  );
  t.same(metadata, [{ compression: "SNAPPY", stats: true }]);
  const [events1] = await db.rows(`SELECT count(*)::INTEGER AS n FROM ${glob("events")}`);
  const logged = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM events");
  t.equal(events1!.n, logged.rows[0]!.n, "every event of the log");
});

t.test("DuckDB over the extract answers as the REST channel does", async (t) => {
  for (const moment of [at(1, 15), at(4, 15), at(6)]) {
    const [duck, rest] = await countsAt(moment);
    t.equal(duck, rest, `users at ${moment.toISOString()}`);
  }
  await aliceVersions(t, ["Engineer", "Director"]);
  const [duck, rest] = await membersDuring(at(3, 10), at(4, 10));
  t.same(duck, [person("alice"), person("bob"), person("carol")]);
  t.same(duck, rest, "staff's members in the interval");
});

t.test("a second run writes what changed since, and a glob sees every row once", async (t) => {
  await history.modify(ids.alice!, { title: ["CEO"] }, { at: at(6) });
  await history.modify(staff, (a) => ({ ...a, member: [...a.member!, person("erin")] }), {
    at: at(6),
  });
  await history.modify(
    staff,
    (a) => ({ ...a, member: a.member!.filter((m) => m !== person("carol")) }),
    { at: at(6, 10) },
  );
  await history.settled();
  const second = await extractToFolder(pool, { dir, schema: TEST_SCHEMA });
  t.equal(second.run, 2);
  const closed = await db.rows(
    `SELECT entry_uuid::VARCHAR AS entry_uuid, version FROM read_parquet(
       ${literal(path.join(dir, "entry_versions", "closed-r000002-*.parquet"))}) ORDER BY 1`,
  );
  t.same(
    closed.map((row) => row.entry_uuid).sort(),
    [ids.alice!, staff, staff].sort(),
    "run 2 closed alice's version and two of staff's",
  );
  const ended = await db.rows(
    `SELECT member_dn, valid_to::VARCHAR AS valid_to FROM read_parquet(
       ${literal(path.join(dir, "memberships", "closed-r000002-*.parquet"))})`,
  );
  t.same(
    ended,
    [{ member_dn: person("carol"), valid_to: "2026-06-10 09:00:00+00" }],
    "run 2 closed carol's membership",
  );
  const manifest = await readManifest(dir);
  for (const file of first.tables.find((x) => x.name === "entry_versions")!.files) {
    if (file.includes("/open-")) t.notOk(manifest!.tables.entry_versions!.files.includes(file));
  }
  t.ok(second.removed.length > 0, "run 1's open files removed");
  const [counts] = await db.rows(
    `SELECT count(*)::INTEGER AS n, count(DISTINCT (entry_uuid, version))::INTEGER AS distinct_n
       FROM ${glob("entry_versions")}`,
  );
  const projected = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${ENTRY_VERSIONS} WHERE NOT deleted`,
  );
  t.same(counts, { n: projected.rows[0]!.n, distinct_n: projected.rows[0]!.n });
  const [events] = await db.rows(
    `SELECT count(*)::INTEGER AS n, count(DISTINCT event_id)::INTEGER AS d FROM ${glob("events")}`,
  );
  const logged = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM events");
  t.same(events, { n: logged.rows[0]!.n, d: logged.rows[0]!.n });
  const [memberships] = await db.rows(
    `SELECT count(*)::INTEGER AS n FROM ${glob("memberships")} WHERE group_dn = ${literal(staffDn)}`,
  );
  t.equal(memberships!.n, 4, "alice, bob (closed), carol, erin: one interval each");
  for (const moment of [at(4, 15), at(6, 2)]) {
    const [duck, rest] = await countsAt(moment);
    t.equal(duck, rest, `users at ${moment.toISOString()}`);
  }
  await aliceVersions(t, ["Engineer", "Director", "CEO"]);
  const [duck, rest] = await membersDuring(at(5), at(7));
  t.same(duck, rest);
  t.same(duck, [person("alice"), person("carol"), person("erin")]);
  const third = await extractToFolder(pool, { dir, schema: TEST_SCHEMA });
  t.same(
    third.tables.map((table) => table.rows),
    third.tables.map(() => 0),
    "a run with nothing new writes nothing",
  );
});

t.test("files split at the row count asked for", async (t) => {
  const small = await mkdtemp(path.join(tmpdir(), "annal-extract-"));
  const report = await extractToFolder(pool, { dir: small, rowsPerFile: 2, batchSize: 3 });
  const events = report.tables.find((table) => table.name === "events")!;
  t.equal(events.files.length, Math.ceil(events.rows / 2));
  const counts = await db.rows(
    `SELECT count(*)::INTEGER AS n FROM read_parquet(${literal(path.join(small, "events", "*.parquet"))}, filename = true)
      GROUP BY filename ORDER BY n DESC LIMIT 1`,
  );
  t.equal(counts[0]!.n, 2);
});

t.test("a run that fails leaves the folder as the last run left it", async (t) => {
  const before = await readManifest(dir);
  const files = async () =>
    (await readdir(dir, { recursive: true })).filter((f) => f.includes(".parquet")).sort();
  const listed = await files();
  await history.modify(ids.erin!, { title: ["Chief"] }, { at: at(7) });
  await history.settled();
  await t.rejects(
    extractToFolder(pool, {
      dir,
      rowsPerFile: 1,
      batchSize: 1,
      onProgress: (phase, done) => {
        if (phase === "entry_versions (open)" && done > 2) throw new Error("stopped here");
      },
    }),
    { message: "stopped here" },
  );
  t.same(await files(), listed, "no file added, none removed, none partial");
  t.same(await readManifest(dir), before, "the manifest as it was");
  const next = await extractToFolder(pool, { dir, schema: TEST_SCHEMA });
  t.equal(next.run, before!.run + 1, "the next run continues");
  const [counts] = await db.rows(
    `SELECT count(*)::INTEGER AS n, count(DISTINCT (entry_uuid, version))::INTEGER AS d
       FROM ${glob("entry_versions")}`,
  );
  t.equal(counts!.n, counts!.d, "every version once");
});
