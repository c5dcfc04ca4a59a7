import t from "tap";
import { allProjections, retainLog } from "../../src/app/index.ts";
import { chainBatch, verifyChain } from "../../src/audit/index.ts";
import type { Pool } from "../../src/db/index.ts";
import { replayProjection } from "../../src/projector/index.ts";
import { ensureEventPartitions, EventStore } from "../../src/store/index.ts";
import { addPeople, PEOPLE, restHarness, testConfig } from "../rest/fixtures/harness.ts";
import { EntryHistory } from "../support/entries.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(300_000);

const day = (n: number, hour = 9) => new Date(Date.UTC(2026, 10, n, hour));
const CONFIG = testConfig('[retention]\nkeep = "1d"');
/** Retention run "now" on day 11, 09:00: the horizon is day 10, 09:00. */
const NOW = day(11);
const HORIZON = day(10);

const quote = (name: string) => `"${name.replaceAll(`"`, `""`)}"`;

async function chainAll(pool: Pool): Promise<void> {
  while ((await chainBatch(pool, 1000)) > 0);
}

/** Every row of every projection's live tables, as sorted JSON text. */
async function projectionTables(pool: Pool): Promise<Record<string, string[]>> {
  const tables = await pool.query<{ schema: string; name: string }>(
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_schema LIKE 'projection\\_%' AND table_schema NOT LIKE '%\\_\\_%'
        AND table_name <> '_checkpoint' ORDER BY 1, 2`,
  );
  const dump: Record<string, string[]> = {};
  for (const { schema, name } of tables.rows) {
    const rows = await pool.query<{ row: string }>(
      `SELECT to_jsonb(t)::text AS row FROM ${quote(schema)}.${quote(name)} AS t`,
    );
    dump[`${schema}.${name}`] = rows.rows.map((r) => r.row).sort();
  }
  return dump;
}

t.test("retention folds the history before the horizon and every later answer stays", async (t) => {
  const { get, history, pool } = await restHarness(t, { config: CONFIG });
  const ids = await addPeople(history, day(1));
  await history.modify(ids.alice!, { title: ["Manager"] }, { at: day(3) });
  await history.modify(ids.alice!, { title: ["Director"] }, { at: day(8) });
  await history.delete(ids.bob!, { at: day(4) });
  await history.modify(ids.carol!, { mail: ["carol@example.net"] }, { at: day(9) });
  await history.rename(ids.dave!, `uid=dave2,${PEOPLE}`, { at: day(12) });
  await history.modify(ids.alice!, { title: ["CEO"] }, { at: day(13) });
  await history.settled();
  await chainAll(pool);

  const moments = [HORIZON, day(10, 12), day(12, 12), day(14)].map((d) => d.toISOString());
  const urls = [
    ...Object.values(ids).flatMap((id) => moments.map((at) => `/api/entries/users/${id}?at=${at}`)),
    ...moments.map((at) => `/api/entries/users?at=${at}&sort=uid&include=nodes,count`),
    `/api/entries/users?sort=uid`,
    `/api/changes?since=${day(11).toISOString()}`,
  ];
  const answer = async (url: string) => {
    const response = await get(url);
    return { status: response.statusCode, body: response.body };
  };
  const before = await Promise.all(urls.map(answer));
  t.equal(before.filter((a) => a.status !== 200).length, 4, "bob is gone at every moment");

  const dry = await retainLog(CONFIG, pool, { now: NOW, dryRun: true });
  t.equal(dry.streamsFolded, 5, "a dry run reports what it would fold");
  const kept = await pool.query("SELECT count(*)::int AS n FROM events");
  const report = await retainLog(CONFIG, pool, { now: NOW });
  t.same(report.horizon, HORIZON);
  t.equal(report.streamsFolded, 5);
  t.equal(report.eventsRemoved, 9, "5 adds and 4 changes before the horizon");
  const after = await pool.query("SELECT count(*)::int AS n FROM events");
  t.equal(
    after.rows[0].n,
    kept.rows[0].n - 9 + 5 + 1,
    "a checkpoint per stream, and the run's event",
  );

  t.same(
    await Promise.all(urls.map(answer)),
    before,
    "every answer after the horizon is unchanged",
  );

  const early = await get(`/api/entries/users/${ids.alice}?at=${day(9).toISOString()}`);
  t.equal(early.statusCode, 410);
  t.match(early.json(), { code: "ANNAL_BEFORE_RETENTION", horizon: HORIZON.toISOString() });
  const search = await get(`/api/entries/users?at=${day(2).toISOString()}`);
  t.equal(search.statusCode, 410);
  const during = await get(
    `/api/entries/users?during=${day(9).toISOString()}/${day(12).toISOString()}`,
  );
  t.equal(during.statusCode, 410, "an interval that starts before the horizon too");
  t.match(during.json(), { code: "ANNAL_BEFORE_RETENTION", parameter: "during" });

  await chainAll(pool);
  const verified = await verifyChain(pool);
  t.ok(verified.checked > 0, "the chain verifies from the cut");
  await pool.query(
    `UPDATE events SET data = jsonb_set(data, '{state,attributes,title}', '["Intern"]')
      WHERE type = 'StreamCheckpointed' AND data->>'entryUUID' = $1`,
    [ids.alice],
  );
  await t.rejects(
    verifyChain(pool),
    { code: "ANNAL_LOG_TAMPERED" },
    "a changed checkpoint is found",
  );
});

t.test("after retention, replaying every projection gives the tables applied live", async (t) => {
  const { history, pool } = await restHarness(t, { config: CONFIG });
  const ids = await addPeople(history, day(1));
  await history.modify(ids.erin!, { title: ["Lead"] }, { at: day(5) });
  await history.delete(ids.bob!, { at: day(6) });
  await history.settled();
  await chainAll(pool);
  await retainLog(CONFIG, pool, { now: NOW });
  // Applied live after the checkpoints: a change of a folded entry, a new one, a second run.
  await history.modify(ids.erin!, { title: ["Head"] }, { at: day(12) });
  await history.modify(ids.carol!, { sn: ["Smith"] }, { at: day(12) });
  await history.settled();
  await chainAll(pool);
  await retainLog(CONFIG, pool, { now: day(12, 10) });
  await history.modify(ids.erin!, { title: ["Chief"] }, { at: day(14) });
  await history.settled();
  const live = await projectionTables(pool);
  for (const projection of allProjections(CONFIG)) await replayProjection({ pool, projection });
  t.same(await projectionTables(pool), live);
  await chainAll(pool);
  t.ok((await verifyChain(pool)).checked > 0, "two runs on, the chain still verifies");
});

t.test("a partition left empty before the cut is dropped whole", async (t) => {
  const { pool } = await testDatabase(t);
  // Partitions four positions wide, from an empty log.
  const made = await pool.query<{ name: string }>("SELECT name FROM event_partitions");
  for (const { name } of made.rows) {
    await pool.query(`ALTER TABLE events DETACH PARTITION ${quote(name)}`);
    await pool.query(`DROP TABLE ${quote(name)}`);
  }
  await pool.query("DELETE FROM event_partitions");
  await pool.query("UPDATE event_partitioning SET width = 4");
  await ensureEventPartitions(pool);
  const store = await EventStore.open(pool);
  const history = await EntryHistory.start(t, pool, store);
  const ids = await addPeople(history, day(1)); // positions 1 to 5
  for (const uid of ["alice", "bob", "carol"]) {
    await history.modify(ids[uid]!, { title: ["Lead"] }, { at: day(3) }); // 6 to 8
  }
  await history.modify(ids.dave!, { title: ["Lead"] }, { at: day(12) }); // 9: the cut
  await history.settled();
  await chainAll(pool);
  const report = await retainLog(CONFIG, pool, { now: NOW });
  t.same(report.partitionsDropped, ["events_from_0"], "1 to 3 were folded into 6 to 8");
  const left = await pool.query<{ name: string }>(
    "SELECT name FROM event_partitions ORDER BY lower_position",
  );
  t.equal(left.rows[0]?.name, "events_from_4");
  await chainAll(pool);
  t.ok((await verifyChain(pool)).checked > 0);
});
