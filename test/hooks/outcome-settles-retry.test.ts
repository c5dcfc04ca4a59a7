import t from "tap";
import { CHANGE_EVENTS_QUEUE } from "../../src/hooks/processing/queue.ts";
import { eventually } from "../support/eventually.ts";
import { change, deliver, hooksFixture, signed, testHooks } from "./fixtures/hooks.ts";

t.test(
  "a job retried after its worker died with the outcome recorded is settled by that outcome, not run again",
  async (t) => {
    const calls: string[] = [];
    const f = await hooksFixture(t, {
      hooks: [
        testHooks({ provider: { process: (envelope) => void calls.push(envelope.eventId) } }),
      ],
    });
    const workers = await f.startWorkers();
    t.equal((await deliver(f.app, signed(change("e-1")))).statusCode, 202);
    const processed = () =>
      f.db.pool
        .query<{ n: number }>(
          "SELECT count(*)::int AS n FROM events WHERE type = 'ChangeEventProcessed'",
        )
        .then((r) => r.rows[0]!.n);
    await eventually(async () => (await processed()) === 1, { what: "e-1 is processed" });
    await workers.stop();

    // What pg-boss makes of a worker that died after appending the outcome and before settling
    // the job: the job again, as its retry (retry_count 1).
    const { rows } = await f.db.pool.query<{ data: unknown; singleton_key: string }>(
      "SELECT data, singleton_key FROM pgboss.job WHERE name = $1",
      [CHANGE_EVENTS_QUEUE],
    );
    const id = await f.jobs.boss.send(CHANGE_EVENTS_QUEUE, rows[0]!.data as object, {
      singletonKey: rows[0]!.singleton_key,
      retryLimit: 3,
    });
    await f.db.pool.query("UPDATE pgboss.job SET retry_count = 1 WHERE id = $1", [id]);

    await f.startWorkers();
    await eventually(
      async () =>
        (
          await f.db.pool.query("SELECT 1 FROM pgboss.job WHERE id = $1 AND state = 'completed'", [
            id,
          ])
        ).rowCount === 1,
      { what: "the retried job completes" },
    );
    t.same(calls, ["e-1"], "the provider ran once");
    t.equal(await processed(), 1, "the change event is processed once in the log");
  },
);
