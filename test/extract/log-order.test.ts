import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { extractToFolder } from "../../src/extract/index.ts";
import { CHANGES } from "../../projections/changes/index.ts";
import { ENTRY_VERSIONS } from "../../projections/entry-versions/index.ts";
import { PEOPLE, restHarness } from "../rest/fixtures/harness.ts";
import { duckdb, literal } from "../support/duckdb.ts";
import { burnTransactionIds, privatePostgres, testDatabase } from "../support/postgres.ts";

/**
 * Incremental extracts across transaction ids 999 → 1000 and 9999 → 10000: each run starts
 * after the log position the last one covered, so a comparison of transaction ids as text
 * ("1000" before "999") would leave out every change past the crossing. The cluster is the
 * file's own, so its transaction ids are where the test puts them.
 */
t.setTimeout(300_000);

const server = await privatePostgres();
const database = await testDatabase(t, { server });
const { pool, history } = await restHarness(t, { database });
const db = await duckdb(t);
const dir = await mkdtemp(path.join(tmpdir(), "annal-extract-xid-"));

const currentXid = async () =>
  BigInt(
    (await pool.query<{ xid: string }>("SELECT pg_current_xact_id()::text AS xid")).rows[0]!.xid,
  );
const alice = await history.add({
  dn: `uid=alice,${PEOPLE}`,
  type: "user",
  attributes: { objectClass: ["inetOrgPerson"], uid: ["alice"], cn: ["Alice"], sn: ["L"] },
});
await history.settled();
await extractToFolder(pool, { dir });

let n = 0;
const crossings: bigint[] = [];
for (const power of [1_000n, 10_000n]) {
  if ((await currentXid()) >= power - 5n) continue;
  await burnTransactionIds(pool, power - 5n);
  for (let i = 0; i < 10; i++) {
    n += 1;
    await history.modify(alice, { title: [`title ${n}`] });
  }
  await history.settled();
  crossings.push(power);
  await extractToFolder(pool, { dir });
}

const glob = (table: string) =>
  `read_parquet(${literal(path.join(dir, table, "*.parquet"))}, union_by_name = true)`;

t.test("each run after a crossing extracts every change once", async (t) => {
  t.ok(crossings.includes(10_000n), `crossed ${crossings.join(", ")}`);
  const [events] = await db.rows(
    `SELECT count(*)::INTEGER AS n, count(DISTINCT event_id)::INTEGER AS d,
            max(transaction_id)::VARCHAR AS xid FROM ${glob("events")}`,
  );
  const logged = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM events");
  t.same({ n: events!.n, d: events!.d }, { n: logged.rows[0]!.n, d: logged.rows[0]!.n });
  t.ok(BigInt(events!.xid as string) >= 10_000n, "events past 10000 are there");
  const [changes] = await db.rows(
    `SELECT count(*)::INTEGER AS n, count(DISTINCT event_id)::INTEGER AS d FROM ${glob("changes")}`,
  );
  const projected = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${CHANGES}`);
  t.same(changes, { n: projected.rows[0]!.n, d: projected.rows[0]!.n });
  const versions = await db.rows(
    `SELECT version, title FROM ${glob("entry_versions")} WHERE entry_uuid = ${literal(alice)}
      ORDER BY version`,
  );
  const stored = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${ENTRY_VERSIONS} WHERE entry_uuid = $1`,
    [alice],
  );
  t.equal(versions.length, stored.rows[0]!.n, "every version of alice once");
  t.same(versions.at(-1)!.title, [`title ${n}`]);
});
