import t from "tap";
import { chainBatch, readChainHead, verifyChain } from "../../src/audit/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { testDatabase } from "../support/postgres.ts";

async function chainAll(pool: Parameters<typeof chainBatch>[0]): Promise<void> {
  while ((await chainBatch(pool, 2)) > 0);
}

t.test("the chain follows log order, and waits for a transaction still in flight", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  await store.appendToStream("s", [{ type: "A", data: { n: 0 } }]);
  // `early` takes its transaction id first but appends last: its event has the higher
  // position and comes first in log order.
  const early = await pool.connect();
  t.teardown(() => early.release());
  await early.query("BEGIN");
  await early.query("SELECT pg_current_xact_id()");
  await store.appendToStream("late", [{ type: "A", data: { n: 1 } }]);
  await chainAll(pool);
  t.equal(
    (await readChainHead(pool))?.at.position,
    1,
    "nothing is chained past the open transaction",
  );
  await store.appendToStream("early", [{ type: "A", data: { n: 2 } }], { tx: early });
  await early.query("COMMIT");
  await chainAll(pool);
  const verified = await verifyChain(pool);
  t.equal(verified.checked, 3);
  const positions = await pool.query<{ position: string }>(
    "SELECT position FROM event_chain WHERE prev_hash = (SELECT hash FROM event_chain WHERE position = 1)",
  );
  t.equal(
    Number(positions.rows[0]?.position),
    3,
    "the early transaction's event follows the first",
  );
});

t.test("verify names the first event changed, removed or slipped in by SQL", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  for (let n = 0; n < 6; n++)
    await store.appendToStream(`s-${n % 2}`, [{ type: "A", data: { n } }]);
  await chainAll(pool);
  t.equal((await verifyChain(pool)).checked, 6);

  await pool.query(`UPDATE events SET data = '{"n": 99}' WHERE position = 4`);
  await t.rejects(verifyChain(pool), { code: "ANNAL_LOG_TAMPERED", position: 4 });
  t.equal((await verifyChain(pool, { to: 3 })).checked, 3, "the chain up to it still holds");
  t.equal(
    (await verifyChain(pool, { from: 5 })).checked,
    2,
    "a walk from after it trusts where it starts",
  );
  await pool.query(`UPDATE events SET data = '{"n": 3}' WHERE position = 4`);
  t.equal((await verifyChain(pool)).checked, 6, "put back, it matches again");

  await pool.query(
    "UPDATE events SET recorded_at = recorded_at + interval '1 microsecond' WHERE position = 2",
  );
  await t.rejects(
    verifyChain(pool),
    { code: "ANNAL_LOG_TAMPERED", position: 2 },
    "a microsecond is a change",
  );
  await pool.query(
    "UPDATE events SET recorded_at = recorded_at - interval '1 microsecond' WHERE position = 2",
  );

  await pool.query("DELETE FROM events WHERE position = 5");
  await t.rejects(verifyChain(pool), { code: "ANNAL_LOG_TAMPERED", position: 5 });
  await t.rejects(verifyChain(pool, { from: 9 }), { code: "ANNAL_LOG_POSITION_UNKNOWN" });
});

t.test("verify names an event whose link was removed", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  for (let n = 0; n < 4; n++) await store.appendToStream("s", [{ type: "A", data: { n } }]);
  await chainAll(pool);
  await pool.query("DELETE FROM event_chain WHERE position = 2");
  await t.rejects(verifyChain(pool), { code: "ANNAL_LOG_TAMPERED", position: 2 });
});
