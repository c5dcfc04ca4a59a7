import t from "tap";
import { chainBatch } from "../../src/audit/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { testDatabase } from "../support/postgres.ts";
import { configDir, runAnnal } from "./support.ts";

t.test("annal log verify walks the chain and names the event an UPDATE changed", async (t) => {
  const { url, pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  for (let n = 0; n < 5; n++)
    await store.appendToStream(`s-${n % 2}`, [{ type: "A", data: { n } }]);
  while ((await chainBatch(pool, 100)) > 0);
  const { file } = await configDir(t, "");
  const env = { env: { DATABASE_URL: url } };

  const holds = await runAnnal(["log", "verify", "--config", file], env);
  t.equal(holds.code, 0, holds.stderr);
  t.match(
    holds.stdout,
    /^the chain holds: 5 events checked, up to event 5 with hash [0-9a-f]{64}\n$/,
  );

  await pool.query(`UPDATE events SET data = jsonb_set(data, '{n}', '7') WHERE position = 3`);
  const tampered = await runAnnal(["log", "verify", "--config", file], env);
  t.equal(tampered.code, 1);
  t.match(
    tampered.stderr,
    /annal: ANNAL_LOG_TAMPERED: event 3 does not match the log's hash chain: the event is not what was chained\n/,
  );
  const before = await runAnnal(["log", "verify", "--to", "2", "--config", file], env);
  t.equal(before.code, 0, before.stderr);
  t.match(before.stdout, /2 events checked, up to event 2 /);

  const bad = await runAnnal(["log", "verify", "--from", "x", "--config", file], env);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /^annal: ANNAL_USAGE: --from takes an event's position/);
});
