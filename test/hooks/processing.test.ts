import t from "tap";
import {
  getFailedWork,
  listFailedWork,
  PermanentFailure,
  retryFailedWork,
  type ProviderContext,
} from "../../src/hooks/index.ts";
import type { RecordedEvent } from "../../src/store/index.ts";
import { change, deliver, hooksFixture, signed, testHooks } from "./fixtures/hooks.ts";
import { eventually } from "../support/eventually.ts";
import { createToken } from "../../src/auth/index.ts";

const outcomes = (events: readonly RecordedEvent[]) =>
  events
    .filter((e) => e.type !== "ChangeEventReceived")
    .map((e) => [
      e.type,
      (e.data as { attempt?: number; attempts?: number }).attempt ??
        (e.data as { attempts?: number }).attempts,
    ]);

/** The stream once it holds `type` (a processing outcome) or the time is up. */
async function untilRecorded(
  stream: () => Promise<RecordedEvent[]>,
  done: (events: RecordedEvent[]) => boolean,
) {
  return eventually(async () => {
    const events = await stream();
    return done(events) ? events : undefined;
  });
}

t.test("a provider that fails twice and then succeeds is retried to success", async (t) => {
  let calls = 0;
  const seen: ProviderContext[] = [];
  const f = await hooksFixture(t, {
    hooks: [
      testHooks({
        provider: {
          retry: { limit: 3, delay: "0" },
          async process(envelope, context) {
            seen.push(context);
            calls++;
            if (calls <= 2) throw new Error(`flaky ${calls}`);
            await context.record({ type: "PersonNoted", data: { subject: envelope.subject } });
            return { done: envelope.eventId };
          },
        },
      }),
    ],
  });
  await f.startWorkers();
  t.equal((await deliver(f.app, signed(change("e-1")))).statusCode, 202);
  const events = await untilRecorded(
    () => f.stream("source-crm"),
    (list) => list.some((e) => e.type === "ChangeEventProcessed"),
  );
  t.ok(events, "processed in time");
  t.same(outcomes(events!), [
    ["ChangeEventFailed", 1],
    ["ChangeEventFailed", 2],
    ["PersonNoted", undefined],
    ["ChangeEventProcessed", 3],
  ]);
  const received = events!.find((e) => e.type === "ChangeEventReceived")!;
  for (const event of events!.filter((e) => e !== received)) {
    t.equal(event.metadata.causationId, received.id, `${event.type} is caused by the change event`);
  }
  t.match(events!.find((e) => e.type === "ChangeEventFailed")!.data, {
    attempt: 1,
    error: { code: null, message: "flaky 1" },
    permanent: false,
    willRetry: true,
  });
  t.match(events!.at(-1)!.data, { result: { done: "e-1" }, receivedEventId: received.id });
  t.same(
    seen.map((c) => [c.attempt, c.causationId, c.directory]),
    [1, 2, 3].map((n) => [n, received.id, undefined]),
    "each attempt numbered, with the causation id, and no directory here",
  );
});

t.test(
  "a permanent failure skips the retries, shows under failed work, and retries from there",
  async (t) => {
    let fixed = false;
    const f = await hooksFixture(t, {
      hooks: [
        testHooks({
          provider: {
            retry: { limit: 5, delay: "0" },
            process() {
              if (!fixed)
                throw new PermanentFailure("person p-1 is unknown", { code: "CRM_UNKNOWN" });
              return undefined;
            },
          },
        }),
      ],
    });
    await f.startProjector();
    await f.startWorkers();
    t.equal((await deliver(f.app, signed(change("e-1")))).statusCode, 202);
    const events = await untilRecorded(
      () => f.stream("source-crm"),
      (list) => list.some((e) => e.type === "ChangeEventAbandoned"),
    );
    t.same(outcomes(events!), [
      ["ChangeEventFailed", 1],
      ["ChangeEventAbandoned", 1],
    ]);
    await f.caughtUp();
    const [work, ...others] = await listFailedWork(f.db.pool);
    t.equal(others.length, 0);
    const received = events!.find((e) => e.type === "ChangeEventReceived")!;
    t.match(work, {
      id: received.id,
      hook: "test",
      webhook: "people",
      source: "crm",
      eventId: "e-1",
      type: "person.updated",
      subject: "p-1",
      state: "failed",
      attempts: 1,
      reason: "permanent_failure",
      lastError: { code: "CRM_UNKNOWN", message: "person p-1 is unknown" },
    });

    fixed = true;
    const retried = await retryFailedWork(
      { store: f.store, jobs: f.jobs, registry: f.registry },
      work!.id,
      {
        requestedBy: "ops",
      },
    );
    t.same(retried, { id: work!.id, queued: true });
    const again = await retryFailedWork({ store: f.store, jobs: f.jobs }, work!.id);
    t.same(
      again,
      { id: work!.id, queued: false },
      "a second request for the same failure queues nothing",
    );
    const after = await untilRecorded(
      () => f.stream("source-crm"),
      (list) => list.some((e) => e.type === "ChangeEventProcessed"),
    );
    t.same(outcomes(after!).slice(2), [
      ["ChangeEventRetryRequested", 1],
      ["ChangeEventProcessed", 2],
    ]);
    await f.caughtUp();
    t.match(await getFailedWork(f.db.pool, work!.id), {
      state: "resolved",
      retries: 1,
      attempts: 2,
    });
    t.same(await listFailedWork(f.db.pool), [], "nothing left that needs attention");
    t.equal((await listFailedWork(f.db.pool, { states: ["resolved"] })).length, 1);
    await t.rejects(retryFailedWork({ store: f.store, jobs: f.jobs }, work!.id), {
      code: "ANNAL_FAILED_WORK_RESOLVED",
    });
    await t.rejects(
      retryFailedWork({ store: f.store, jobs: f.jobs }, "00000000-0000-0000-0000-000000000000"),
      { code: "ANNAL_FAILED_WORK_NOT_FOUND" },
    );
  },
);

t.test("retries used up make failed work too", async (t) => {
  const f = await hooksFixture(t, {
    hooks: [
      testHooks({
        provider: {
          retry: { limit: 1, delay: "0" },
          process() {
            throw Object.assign(new Error("crm is down"), { code: "ECONNREFUSED" });
          },
        },
      }),
    ],
  });
  await f.startProjector();
  await f.startWorkers();
  await deliver(f.app, signed(change("e-1")));
  const events = await untilRecorded(
    () => f.stream("source-crm"),
    (list) => list.some((e) => e.type === "ChangeEventAbandoned"),
  );
  t.same(outcomes(events!), [
    ["ChangeEventFailed", 1],
    ["ChangeEventFailed", 2],
    ["ChangeEventAbandoned", 2],
  ]);
  await f.caughtUp();
  t.match(await listFailedWork(f.db.pool), [
    {
      state: "failed",
      attempts: 2,
      reason: "retries_exhausted",
      lastError: { code: "ECONNREFUSED" },
    },
  ]);
});

t.test("a provider that takes longer than its timeout fails that attempt", async (t) => {
  const f = await hooksFixture(t, {
    hooks: [
      testHooks({
        provider: { retry: { limit: 0 }, timeout: "300ms", process: () => new Promise(() => {}) },
      }),
    ],
  });
  await f.startWorkers();
  await deliver(f.app, signed(change("e-1")));
  const events = await untilRecorded(
    () => f.stream("source-crm"),
    (list) => list.some((e) => e.type === "ChangeEventAbandoned"),
  );
  t.match(events!.find((e) => e.type === "ChangeEventFailed")!.data, {
    error: { code: "ANNAL_HOOK_TIMEOUT" },
    willRetry: false,
  });
});

t.test("the failed-work routes list and retry as JSON", async (t) => {
  const f = await hooksFixture(t, {
    hooks: [
      testHooks({
        provider: {
          process() {
            throw new PermanentFailure("no");
          },
        },
      }),
    ],
  });
  await f.startProjector();
  await f.startWorkers();
  await deliver(f.app, signed(change("e-1")));
  await untilRecorded(
    () => f.stream("source-crm"),
    (list) => list.some((e) => e.type === "ChangeEventAbandoned"),
  );
  await f.caughtUp();
  const { token } = await createToken(f.store.pool, f.store, { name: "ops", access: ["operator"] });
  const headers = { authorization: `Bearer ${token}` };
  t.equal(
    (await f.app.inject({ method: "GET", url: "/api/failed-work" })).statusCode,
    401,
    "failed work needs credentials",
  );
  const list = await f.app.inject({ method: "GET", url: "/api/failed-work", headers });
  t.equal(list.statusCode, 200);
  const { items } = list.json() as { items: { id: string; state: string; eventId: string }[] };
  t.match(items, [{ state: "failed", eventId: "e-1" }]);
  const retry = await f.app.inject({
    method: "POST",
    url: `/api/failed-work/${items[0]!.id}/retry`,
    headers,
  });
  t.equal(retry.statusCode, 200);
  t.same(retry.json(), { id: items[0]!.id, queued: true });
  const bad = await f.app.inject({
    method: "GET",
    url: "/api/failed-work?state=gone",
    headers,
  });
  t.equal(bad.statusCode, 400);
});

t.test("a backlog is worked through without a polling interval between its jobs", async (t) => {
  const f = await hooksFixture(t);
  const deliveries = 30;
  for (let i = 0; i < deliveries; i++) {
    t.equal((await deliver(f.app, signed(change(`e-${i}`)))).statusCode, 202);
  }
  // One slot polling every 20 s: a poll between jobs would take ten minutes for thirty.
  await f.startWorkers({ concurrency: 1, pollingIntervalSeconds: 20 });
  const processed = await eventually(
    async () => {
      const events = await f.stream("source-crm");
      const done = events.filter((e) => e.type === "ChangeEventProcessed").length;
      return done === deliveries ? done : undefined;
    },
    { what: "every delivery processed", timeout: 60_000, interval: 250 },
  );
  t.equal(processed, deliveries);
});
