import t from "tap";
import { CHANGE_EVENTS_QUEUE } from "../../src/hooks/processing/queue.ts";
import { getFailedWork } from "../../src/hooks/index.ts";
import { eventually } from "../support/eventually.ts";
import { change, deliver, hooksFixture, signed, testHooks } from "./fixtures/hooks.ts";

/**
 * Change events of one subject are processed one at a time, in the order the webhook
 * accepted them (two HR events for one employee must not apply in parallel, nor the later
 * first); other subjects go on alongside. And a change event whose worker died during its
 * last attempt still ends abandoned, under failed work.
 */
t.setTimeout(120_000);

/** A promise and the function that settles it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

t.test("two change events of one subject: the second starts after the first ends", async (t) => {
  const log: string[] = [];
  const firstRunning = gate();
  const releaseFirst = gate();
  const f = await hooksFixture(t, {
    hooks: [
      testHooks({
        provider: {
          async process(envelope) {
            log.push(`start ${envelope.eventId}`);
            if (envelope.eventId === "e-1") {
              firstRunning.open();
              await releaseFirst.opened;
            }
            log.push(`end ${envelope.eventId}`);
          },
        },
      }),
    ],
  });
  t.equal((await deliver(f.app, signed(change("e-1", { person: "p-7" })))).statusCode, 202);
  t.equal((await deliver(f.app, signed(change("e-2", { person: "p-7" })))).statusCode, 202);
  await f.startWorkers();
  await firstRunning.opened;
  // The second is queued and the worker has room for ten at once: were it fetchable, a few
  // polls (every 0.5 s) would start it. It is not, while the first runs.
  await eventually(
    async () =>
      (
        await f.db.pool.query(
          "SELECT 1 FROM pgboss.job WHERE name = $1 AND state = 'active' AND data->>'receivedEventId' IS NOT NULL",
          [CHANGE_EVENTS_QUEUE],
        )
      ).rowCount,
    { what: "the first job is active" },
  );
  const waiting = await f.db.pool.query<{ state: string }>(
    "SELECT state FROM pgboss.job WHERE name = $1 ORDER BY created_on",
    [CHANGE_EVENTS_QUEUE],
  );
  t.same(
    waiting.rows.map((r) => r.state),
    ["active", "created"],
  );
  t.same(log, ["start e-1"], "nothing of e-2 runs while e-1 does");
  releaseFirst.open();
  await eventually(() => log.length === 4, { what: "both processed" });
  t.same(log, ["start e-1", "end e-1", "start e-2", "end e-2"]);
});

t.test("change events of different subjects run side by side", async (t) => {
  const started = new Set<string>();
  const ranAlone: string[] = [];
  const f = await hooksFixture(t, {
    hooks: [
      testHooks({
        provider: {
          async process(envelope) {
            started.add(envelope.subject);
            // Each waits for the other to have started: only parallel processing ends.
            try {
              await eventually(() => started.size === 2, {
                what: `another subject's event to start beside ${envelope.subject}'s`,
                timeout: 20_000,
              });
            } catch (error) {
              ranAlone.push(envelope.subject);
              throw error;
            }
          },
        },
      }),
    ],
  });
  await deliver(f.app, signed(change("e-1", { person: "p-1" })));
  await deliver(f.app, signed(change("e-2", { person: "p-2" })));
  await f.startWorkers();
  await eventually(
    async () =>
      (await f.stream("source-crm")).filter((e) => e.type === "ChangeEventProcessed").length === 2,
    { what: "both processed", timeout: 30_000 },
  );
  t.same([...started].sort(), ["p-1", "p-2"]);
  t.same(ranAlone, [], "neither ran alone");
});

t.test("a change event whose worker died in its last attempt ends under failed work", async (t) => {
  const f = await hooksFixture(t, {
    hooks: [testHooks({ provider: { retry: { limit: 0, delay: "0" }, process: () => undefined } })],
  });
  await f.startProjector();
  t.equal((await deliver(f.app, signed(change("e-1", { person: "p-9" })))).statusCode, 202);
  t.equal((await deliver(f.app, signed(change("e-2", { person: "p-9" })))).statusCode, 202);
  // A worker takes the job and dies before it records anything: the job stays active.
  const [taken] = await f.jobs.boss.fetch(CHANGE_EVENTS_QUEUE);
  t.ok(taken, "a worker took the first job");
  // Its expiry passes (as if the worker had been gone for an hour), and pg-boss's supervision
  // fails the job for good: no retry is left, so it goes to the dead-letter queue.
  await f.db.pool.query(
    "UPDATE pgboss.job SET started_on = started_on - interval '1 hour' WHERE id = $1",
    [taken!.id],
  );
  await f.jobs.boss.supervise(CHANGE_EVENTS_QUEUE);
  await f.startWorkers();

  const events = await eventually(
    async () => {
      const stream = await f.stream("source-crm");
      const abandoned = stream.some((e) => e.type === "ChangeEventAbandoned");
      const processed = stream.some((e) => e.type === "ChangeEventProcessed");
      return abandoned && processed ? stream : undefined;
    },
    { what: "e-1 abandoned and e-2 processed", timeout: 30_000 },
  );
  const abandoned = events.find((e) => e.type === "ChangeEventAbandoned")!;
  t.match(abandoned.data, {
    eventId: "e-1",
    subject: "p-9",
    attempts: 1,
    reason: "attempt_lost",
    error: { code: "ANNAL_HOOK_ATTEMPT_LOST" },
  });
  t.match(events.find((e) => e.type === "ChangeEventProcessed")!.data, { eventId: "e-2" });
  await f.caughtUp();
  const work = await getFailedWork(f.db.pool, abandoned.metadata.causationId!);
  t.match(work, { state: "failed", eventId: "e-1", reason: "attempt_lost" });
});
