import t from "tap";
import { signDelivery } from "../../src/hooks/index.ts";
import { JOB_HEARTBEAT_SECONDS, JOB_MONITOR_INTERVAL_SECONDS } from "../../src/jobs/index.ts";
import { CHANGE_EVENTS_QUEUE } from "../../src/hooks/processing/queue.ts";
import { freePort } from "../../src/ports.ts";
import { startPart } from "../support/annal-process.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(240_000);

const SECRET = "worker-killed-secret-0123456789";

/**
 * The first attempt of subject `stuck`'s first change never ends (its worker is killed);
 * every other attempt succeeds at once. The provider's own timeout is an hour, so only the
 * queue's heartbeat can free the subject.
 */
const HOOKS = `
import { z } from "zod";
import { defineHooks, http } from "annal";

const body = z.object({ id: z.string(), person: z.string(), at: z.string() });

export default defineHooks({
  name: "crm",
  webhooks: {
    people: http.webhook({
      body,
      signature: { secrets: ["\${CRM_SECRET}"] },
      rateLimit: false,
      map: (b) => [{ source: "crm", eventId: b.id, type: "person.updated", subject: b.person, occurredAt: b.at, data: {} }],
    }),
  },
  provider: {
    retry: { limit: 3, delay: "0" },
    timeout: "1h",
    async process(envelope, context) {
      if (envelope.subject === "stuck" && envelope.eventId === "stuck-0" && context.attempt === 1) {
        await new Promise(() => {});
      }
      return { done: envelope.eventId };
    },
  },
});
`;

async function deliver(url: string, id: string, person: string) {
  const payload = JSON.stringify({ id, person, at: "2026-11-27T08:00:00Z" });
  const webhookId = `msg_${id}`;
  const timestamp = Math.floor(Date.now() / 1000);
  const response = await fetch(`${url}/-hooks/crm/people`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "webhook-id": webhookId,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signDelivery(SECRET, webhookId, timestamp, payload),
    },
    body: payload,
  });
  if (response.status !== 202)
    throw new Error(`${id}: ${response.status} ${await response.text()}`);
}

t.test(
  "a subject's changes queued behind the job of a SIGKILLed worker run again within the heartbeat's bound",
  async (t) => {
    const db = await testDatabase(t);
    const cwd = t.testdir({ "annal.toml": `[hooks]\ndir = "hooks"\n`, hooks: { "crm.ts": HOOKS } });
    const env = { DATABASE_URL: db.url, CRM_SECRET: SECRET };
    const api = await startPart(t, "api", { cwd, env: { ...env, PORT: String(await freePort()) } });
    const doomed = await startPart(t, "workers", { cwd, env });

    const processed = async (eventIdPrefix: string) =>
      Number(
        (
          await db.pool.query<{ n: string }>(
            `SELECT count(*) AS n FROM events
              WHERE type = 'ChangeEventProcessed' AND data->'result'->>'done' LIKE $1`,
            [`${eventIdPrefix}%`],
          )
        ).rows[0]!.n,
      );

    await deliver(api.url!, "stuck-0", "stuck");
    await eventually(
      async () =>
        (
          await db.pool.query(
            `SELECT 1 FROM pgboss.job WHERE name = $1 AND state = 'active' AND heartbeat_seconds = $2`,
            [CHANGE_EVENTS_QUEUE, JOB_HEARTBEAT_SECONDS],
          )
        ).rowCount === 1,
      { what: "the doomed worker runs stuck-0, with a heartbeat" },
    );
    // 38 more changes of the stuck subject wait behind it (key_strict_fifo).
    for (let n = 1; n <= 38; n++) await deliver(api.url!, `stuck-${n}`, "stuck");
    t.equal(await processed("stuck-"), 0, "the stuck subject waits for its first change");

    await doomed.kill();
    const killedAt = Date.now();
    await startPart(t, "workers", { cwd, env });
    // The bound: the heartbeat goes stale (10 s), the next monitor pass fails the job (5 s),
    // the retry (delay 0) and the 38 behind it run; the provider's expiry would be an hour.
    const bound = (JOB_HEARTBEAT_SECONDS + JOB_MONITOR_INTERVAL_SECONDS) * 1000 + 45_000;
    await eventually(async () => (await processed("stuck-")) === 39, {
      what: "every change of the stuck subject is processed",
      timeout: bound,
      interval: 250,
    });
    t.ok(Date.now() - killedAt < bound, `drained ${Date.now() - killedAt} ms after the kill`);
    const failed = await db.pool.query<{ message: string }>(
      `SELECT data->'error'->>'message' AS message FROM events
        WHERE type IN ('ChangeEventFailed', 'ChangeEventAbandoned')`,
    );
    t.same(
      failed.rows.map((r) => r.message),
      [],
      "the lost attempt records no failure of the provider's",
    );
    const attempts = await db.pool.query<{ attempt: number }>(
      `SELECT COALESCE(data->>'attempt', data->>'attempts')::int AS attempt FROM events
        WHERE type = 'ChangeEventProcessed' AND data->'result'->>'done' = 'stuck-0'`,
    );
    t.same(
      attempts.rows.map((r) => r.attempt),
      [2],
      "stuck-0 completes at its second attempt",
    );
  },
);
