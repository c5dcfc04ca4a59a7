import { pino } from "pino";
import t from "tap";
import { startPeriodicRetention } from "../../src/app/retention.ts";
import { chainBatch, verifyChain } from "../../src/audit/index.ts";
import { addPeople, restHarness, testConfig } from "../rest/fixtures/harness.ts";
import { eventually } from "../support/eventually.ts";

t.setTimeout(300_000);

const day = (n: number) => new Date(Date.UTC(2026, 9, n, 9));

// The workers part runs retention every `[retention] interval` (`startPeriodicRetention`):
// configured so, it folds the log without anyone asking, and again at the next turn.
t.test("the configured periodic retention runs, and runs again", async (t) => {
  const config = testConfig('[retention]\nkeep = "1d"\ninterval = "1s"');
  const { history, pool } = await restHarness(t, { config });
  const ids = await addPeople(history, day(1));
  await history.modify(ids.alice!, { title: ["Manager"] }, { at: day(3) });
  await history.settled();
  while ((await chainBatch(pool, 1000)) > 0);

  const logged: { level: number; msg: string }[] = [];
  const log = pino({ level: "info" }, { write: (line: string) => logged.push(JSON.parse(line)) });
  const periodic = startPeriodicRetention(config, pool, log);
  t.teardown(() => periodic.stop());

  const runs = async () =>
    (
      await pool.query<{ horizon: Date; streams_folded: number }>(
        "SELECT horizon, streams_folded FROM log_retention ORDER BY id",
      )
    ).rows;
  const first = await eventually(async () => ((await runs()).length >= 1 ? runs() : undefined), {
    what: "the first periodic run",
    timeout: 60_000,
  });
  t.equal(first[0]!.streams_folded, Object.keys(ids).length, "every entry's stream folded");
  const horizon = first[0]!.horizon.getTime();
  t.ok(Math.abs(horizon - (Date.now() - 86_400_000)) < 60_000, "the horizon is now - keep");
  const after = await pool.query<{ adds: number; checkpoints: number }>(
    `SELECT count(*) FILTER (WHERE type = 'EntryAdded')::int AS adds,
            count(*) FILTER (WHERE type = 'StreamCheckpointed')::int AS checkpoints
       FROM events WHERE stream_id LIKE 'entry-%'`,
  );
  t.same(after.rows[0], { adds: 0, checkpoints: Object.keys(ids).length }, "the adds are folded");
  // The run logs once it has rebuilt the projections from the log it left.
  await eventually(() => logged.some((line) => /streams folded/.test(line.msg)), {
    what: "the run's log line",
    timeout: 240_000,
  });

  // The next turn has something to cover once the chain takes in what the first one appended.
  while ((await chainBatch(pool, 1000)) > 0);
  await eventually(async () => (await runs()).length >= 2, {
    what: "the next periodic run, an interval later",
    timeout: 240_000,
  });
  t.notOk(
    logged.some((line) => line.level >= 50),
    "no run failed",
  );
  await periodic.stop();
  while ((await chainBatch(pool, 1000)) > 0);
  t.ok((await verifyChain(pool)).checked > 0, "the chain verifies after the periodic runs");
});
