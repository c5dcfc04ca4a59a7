import t from "tap";
import { eraseFromLog, retainLog } from "../../src/app/index.ts";
import { chainBatch, verifyChain } from "../../src/audit/index.ts";
import type { Pool } from "../../src/db/index.ts";
import { addPeople, PEOPLE, restHarness, testConfig } from "../rest/fixtures/harness.ts";

t.setTimeout(300_000);

const day = (n: number) => new Date(Date.UTC(2026, 10, n, 9));
const CONFIG = testConfig('[retention]\nkeep = "1d"');
const quote = (name: string) => `"${name.replaceAll(`"`, `""`)}"`;

async function chainAll(pool: Pool): Promise<void> {
  while ((await chainBatch(pool, 1000)) > 0);
}

/** The tables of every schema of the database whose rows, as text, contain `value`. */
async function tablesHolding(pool: Pool, value: string): Promise<string[]> {
  const tables = await pool.query<{ schema: string; name: string }>(
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_type = 'BASE TABLE'
        AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  const holding: string[] = [];
  for (const { schema, name } of tables.rows) {
    const found = await pool.query(
      `SELECT 1 FROM ${quote(schema)}.${quote(name)} AS t WHERE t::text ILIKE $1 LIMIT 1`,
      [`%${value}%`],
    );
    if (found.rows.length > 0) holding.push(`${schema}.${name}`);
  }
  return holding.sort();
}

t.test(
  "an erasure redacts one person's values in the log and every table, and the chain verifies",
  async (t) => {
    const { get, history, pool } = await restHarness(t, { config: CONFIG });
    const ids = await addPeople(history, day(1));
    await history.modify(
      ids.bob!,
      { mail: ["bob.private@example.net"], title: ["Director"] },
      { at: day(3) },
    );
    await history.delete(ids.bob!, { at: day(5) });
    await history.modify(ids.alice!, { title: ["Manager"] }, { at: day(6) });
    await history.settled();
    await chainAll(pool);
    const values = ["bob.private@example.net", "+49 170 1002", "Bob Builder"];
    for (const value of values) {
      t.not((await tablesHolding(pool, value)).length, 0, `${value} is recorded`);
    }

    await t.rejects(
      eraseFromLog(CONFIG, pool, { entry: ids.alice!, reason: "order 7" }),
      { code: "ANNAL_ERASURE_ENTRY_PRESENT" },
      "an entry still in the directory is refused",
    );
    await t.rejects(eraseFromLog(CONFIG, pool, { entry: ids.bob!, reason: " " }), {
      code: "ANNAL_ERASURE_REASON_MISSING",
    });
    await t.rejects(eraseFromLog(CONFIG, pool, { entry: `uid=nobody,${PEOPLE}`, reason: "x" }), {
      code: "ANNAL_ERASURE_ENTRY_UNKNOWN",
    });

    const erasure = await eraseFromLog(CONFIG, pool, {
      entry: `uid=bob,${PEOPLE}`,
      reason: "erasure order 2026-117",
    });
    t.equal(erasure.entryUUID, ids.bob);
    t.equal(erasure.positions.length, 3, "the add, the change and the delete");
    t.ok(erasure.attributes.includes("mail") && !erasure.attributes.includes("objectclass"));
    for (const value of values) {
      t.same(await tablesHolding(pool, value), [], `${value} is in no table`);
    }
    const recorded = await pool.query<{ data: Record<string, unknown> }>(
      "SELECT data FROM events WHERE type = 'EntryErased'",
    );
    t.match(recorded.rows[0]?.data, {
      entryUUID: ids.bob,
      reason: "erasure order 2026-117",
      events: erasure.positions.map((position) => ({ position })),
    });
    const history1 = await get(`/api/entries/users/${ids.bob}?at=${day(4).toISOString()}`);
    t.equal(history1.statusCode, 200);
    t.same(history1.json().mail, ["(erased)"], "the history keeps the shape, not the values");

    await chainAll(pool);
    t.ok((await verifyChain(pool)).checked > 0, "the chain verifies after the erasure");
    await pool.query(
      `UPDATE events SET data = jsonb_set(data, '{after,attributes,title}', '["Intern"]')
      WHERE position = $1`,
      [erasure.positions[1]],
    );
    await t.rejects(verifyChain(pool), {
      code: "ANNAL_LOG_TAMPERED",
      position: erasure.positions[1],
    });
    await pool.query(
      `UPDATE events SET data = jsonb_set(data, '{after,attributes,title}', '["Director"]')
      WHERE position = $1`,
      [erasure.positions[1]],
    );

    // Retention after an erasure: the kept digest counts the erased checkpoint as first made.
    await retainLog(CONFIG, pool, { now: day(8) });
    await chainAll(pool);
    t.ok((await verifyChain(pool)).checked > 0, "and after retention too");
    for (const value of values) t.same(await tablesHolding(pool, value), []);
  },
);
