import { testDatabase } from "../support/postgres.ts";
import { createLogger } from "../../src/logger.ts";
import t from "tap";
import { defineHooks, http } from "../../src/hooks/index.ts";
import { EventStore } from "../../src/store/index.ts";
import {
  change,
  changeBody,
  countEvents,
  countJobs,
  deliver,
  hooksFixture,
  OLD_SECRET,
  SECRET,
  signed,
  testHooks,
} from "./fixtures/hooks.ts";
import { createAuthentication } from "../../src/auth/index.ts";

const now = () => Math.floor(Date.now() / 1000);

/** `{"a":{"a":…}}`, `depth` objects deep. */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

t.test("a signed delivery is stored with its content hash and queued: 202", async (t) => {
  const f = await hooksFixture(t);
  const response = await deliver(f.app, signed(change("e-1", { value: { b: 1, a: [1, 2] } })));
  t.equal(response.statusCode, 202);
  t.same(response.json(), { accepted: [{ source: "crm", eventId: "e-1", stored: true }] });
  const [event] = await f.stream("source-crm");
  t.equal(event!.type, "ChangeEventReceived");
  t.equal(event!.idempotencyKey, "change-event:crm:e-1");
  t.equal(event!.occurredAt.toISOString(), "2026-11-22T08:30:00.000Z", "the source's clock");
  t.match(event!.data, {
    hook: "test",
    webhook: "people",
    envelope: {
      source: "crm",
      eventId: "e-1",
      type: "person.updated",
      subject: "p-1",
      occurredAt: "2026-11-22T08:30:00.000Z",
      data: { value: { a: [1, 2], b: 1 } },
    },
    contentHash: /^[0-9a-f]{64}$/,
  });
  t.match(event!.metadata, { source: "webhook:test/people", actor: "crm" });
  t.equal(await countJobs(f.db), 1, "one job for the one event");
});

t.test("the same event again is a success that stores nothing", async (t) => {
  const f = await hooksFixture(t);
  t.equal((await deliver(f.app, signed(change("e-1")))).statusCode, 202);
  // Another delivery (new id, new signature) of the same content, keys in another order.
  const again = await deliver(
    f.app,
    signed(`{"at":"2026-11-22T09:30:00+01:00","person":"p-1","id":"e-1"}`),
  );
  t.equal(again.statusCode, 202);
  t.same(again.json(), { accepted: [{ source: "crm", eventId: "e-1", stored: false }] });
  t.equal(await countEvents(f.store), 1);
  t.equal(await countJobs(f.db), 1);
});

t.test("400 invalid_request_body", async (t) => {
  const f = await hooksFixture(t, {
    hooks: [
      testHooks(),
      defineHooks({
        name: "odd",
        webhooks: {
          throws: http.webhook({
            body: changeBody,
            signature: { secrets: ["${TEST_WEBHOOK_SECRET}"] },
            map: () => {
              throw new Error("not for me");
            },
          }),
          empty: http.webhook({
            body: changeBody,
            signature: { secrets: ["${TEST_WEBHOOK_SECRET}"] },
            map: () => [],
          }),
        },
        provider: { process: () => undefined },
      }),
    ],
  });
  const cases: [string, string | object, string?][] = [
    ["not JSON", "{not json"],
    ["an empty body", ""],
    ["a body the schema refuses", { id: "e-1" }],
    ["a change event without a valid time", change("e-1", { at: "yesterday" })],
    ["map throwing", change("e-1"), "/-hooks/odd/throws"],
    ["map returning nothing", change("e-1"), "/-hooks/odd/empty"],
    // Never 503 (the sender would resend it forever): PostgreSQL's jsonb refuses such depth.
    ["a value nested 5,000 deep", change("e-1", { value: nested(5_000) })],
    ["a body nested 5,000 deep", `${"[".repeat(5_000)}${"]".repeat(5_000)}`],
    ["a value nested past the limit of 64", change("e-1", { value: nested(64) })],
  ];
  for (const [what, body, url] of cases) {
    const response = await deliver(f.app, signed(body), url);
    t.equal(response.statusCode, 400, what);
    t.same(response.json(), { error: "invalid_request_body" }, what);
  }
  t.equal(await countEvents(f.store), 0);
});

t.test("400 for a map that gives an invalid change event", async (t) => {
  const f = await hooksFixture(t, {
    hooks: [
      testHooks({
        webhook: {
          map: (b: { id: string }) => ({
            source: "crm:x",
            eventId: b.id,
            type: "t",
            subject: "s",
            occurredAt: new Date(),
          }),
        },
      }),
    ],
  });
  const response = await deliver(f.app, signed(change("e-1")));
  t.equal(response.statusCode, 400);
  t.same(response.json(), { error: "invalid_request_body" });
});

t.test("401 authentication_required without a signature or timestamp header", async (t) => {
  const f = await hooksFixture(t);
  for (const header of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
    const request = signed(change("e-1"));
    delete request.headers[header];
    const response = await deliver(f.app, request);
    t.equal(response.statusCode, 401, `without ${header}`);
    t.equal(response.headers["www-authenticate"], 'Signature realm="annal-webhooks"');
    t.same(response.json(), { error: "authentication_required" });
  }
  t.equal(await countEvents(f.store), 0);
});

t.test("403 authentication_failed", async (t) => {
  const f = await hooksFixture(t);
  const body = change("e-1");
  const text = JSON.stringify(body);
  const reserialised = (() => {
    const request = signed(text);
    return { ...request, payload: JSON.stringify(body, null, 2) };
  })();
  const cases: [string, ReturnType<typeof signed>][] = [
    ["a wrong secret", signed(body, { secret: "not-the-secret" })],
    ["a signature over re-serialised JSON (whitespace changed)", reserialised],
    [
      "a signature for another timestamp",
      (() => {
        const request = signed(body);
        request.headers["webhook-timestamp"] = String(
          Number(request.headers["webhook-timestamp"]) - 1,
        );
        return request;
      })(),
    ],
    [
      "a garbled signature",
      (() => {
        const request = signed(body);
        request.headers["webhook-signature"] = "v1,AAAA";
        return request;
      })(),
    ],
    [
      "a timestamp that is not a number",
      (() => {
        const request = signed(body);
        request.headers["webhook-timestamp"] = "2026-11-22T08:30:00Z";
        return request;
      })(),
    ],
    ["a sender clock 6 minutes behind", signed(body, { timestamp: now() - 360 })],
    ["a sender clock 6 minutes ahead", signed(body, { timestamp: now() + 360 })],
  ];
  for (const [what, request] of cases) {
    const response = await deliver(f.app, request);
    t.equal(response.statusCode, 403, what);
    t.same(response.json(), { error: "authentication_failed" }, what);
  }
  t.equal(await countEvents(f.store), 0);
});

t.test("a clock within maxClockSkew is accepted in both directions", async (t) => {
  const f = await hooksFixture(t);
  const behind = await deliver(f.app, signed(change("e-1"), { timestamp: now() - 290 }));
  const ahead = await deliver(f.app, signed(change("e-2"), { timestamp: now() + 290 }));
  t.equal(behind.statusCode, 202);
  t.equal(ahead.statusCode, 202);
});

t.test("rotation: either of two secrets is accepted, a third is not", async (t) => {
  const f = await hooksFixture(t);
  t.equal((await deliver(f.app, signed(change("e-1"), { secret: SECRET }))).statusCode, 202);
  t.equal((await deliver(f.app, signed(change("e-2"), { secret: OLD_SECRET }))).statusCode, 202);
  const both = signed(change("e-3"), { secret: OLD_SECRET });
  const newer = signed(change("e-3"), {
    secret: SECRET,
    id: both.headers["webhook-id"],
    timestamp: Number(both.headers["webhook-timestamp"]),
  });
  both.headers["webhook-signature"] += ` ${newer.headers["webhook-signature"]}`;
  t.equal((await deliver(f.app, both)).statusCode, 202, "a header with both signatures");
  t.equal((await deliver(f.app, signed(change("e-4"), { secret: "retired" }))).statusCode, 403);
});

t.test("header names are the webhook's own when it names them", async (t) => {
  const names = { id: "x-hr-id", timestamp: "x-hr-time", signature: "x-hr-signature" };
  const f = await hooksFixture(t, {
    hooks: [
      testHooks({
        webhook: {
          signature: {
            secrets: ["${TEST_WEBHOOK_SECRET}"],
            headers: { id: "X-HR-Id", timestamp: "X-HR-Time", signature: "X-HR-Signature" },
          },
        },
      }),
    ],
  });
  t.equal((await deliver(f.app, signed(change("e-1"), { headers: names }))).statusCode, 202);
  const standard = await deliver(f.app, signed(change("e-2")));
  t.equal(standard.statusCode, 401);
  t.same(standard.json(), { error: "authentication_required" });
});

t.test("404 webhook_not_found for an unknown hook or webhook", async (t) => {
  const f = await hooksFixture(t);
  for (const url of [
    "/-hooks/nope/people",
    "/-hooks/test/nope",
    "/-hooks/test",
    "/-hooks/test/people/x",
  ]) {
    const response = await deliver(f.app, signed(change("e-1")), url);
    t.equal(response.statusCode, 404, url);
    t.same(response.json(), { error: "webhook_not_found" }, url);
  }
  const get = await f.app.inject({ method: "GET", url: "/-hooks/test/people" });
  t.equal(get.statusCode, 404);
  t.same(get.json(), { error: "webhook_not_found" });
});

t.test(
  "409 change_event_conflict: a reused eventId with changed content stores nothing",
  async (t) => {
    const f = await hooksFixture(t);
    t.equal((await deliver(f.app, signed(change("e-1", { value: 1 })))).statusCode, 202);
    const before = await countEvents(f.store);
    const changed = await deliver(f.app, signed(change("e-1", { value: 2 })));
    t.equal(changed.statusCode, 409);
    t.same(changed.json(), { error: "change_event_conflict" });
    // A batch with a new event and the conflicting one: nothing of it is stored either.
    const batch = await deliver(
      f.app,
      signed({ changes: [change("e-2"), change("e-1", { value: 3 })] }),
    );
    t.equal(batch.statusCode, 409);
    t.same(batch.json(), { error: "change_event_conflict" });
    const twice = await deliver(
      f.app,
      signed({ changes: [change("e-3", { value: 1 }), change("e-3", { value: 2 })] }),
    );
    t.equal(twice.statusCode, 409, "the same eventId twice in one delivery, differently");
    t.equal(await countEvents(f.store), before);
    t.equal(await countJobs(f.db), 1);
  },
);

t.test("413 request_too_large", async (t) => {
  const f = await hooksFixture(t, {
    hooks: [
      testHooks({ webhook: { limits: { bodyBytes: 2000, envelopes: 3, envelopeBytes: 500 } } }),
    ],
  });
  const cases: [string, object][] = [
    ["a body over bodyBytes", change("e-1", { value: "x".repeat(3000) })],
    ["more change events than allowed", { changes: ["a", "b", "c", "d"].map((id) => change(id)) }],
    ["a change event over envelopeBytes", change("e-1", { value: "x".repeat(600) })],
  ];
  for (const [what, body] of cases) {
    const response = await deliver(f.app, signed(body));
    t.equal(response.statusCode, 413, what);
    t.same(response.json(), { error: "request_too_large" }, what);
  }
  const unsigned = await f.app.inject({
    method: "POST",
    url: "/-hooks/test/people",
    headers: signed({}).headers,
    payload: "x".repeat(5000),
  });
  t.equal(unsigned.statusCode, 413, "the size is checked before the signature");
  t.equal(await countEvents(f.store), 0);
});

t.test("429 rate_limit_exceeded with Retry-After", async (t) => {
  const f = await hooksFixture(t, {
    hooks: [testHooks({ webhook: { rateLimit: { requests: 2, per: "1m" } } })],
  });
  t.equal((await deliver(f.app, signed(change("e-1")))).statusCode, 202);
  t.equal((await deliver(f.app, signed(change("e-2")))).statusCode, 202);
  const limited = await deliver(f.app, signed(change("e-3")));
  t.equal(limited.statusCode, 429);
  t.same(limited.json(), { error: "rate_limit_exceeded" });
  const wait = Number(limited.headers["retry-after"]);
  t.ok(wait >= 29 && wait <= 30, `Retry-After ${wait}: a token comes every 30 s`);
});

t.test("503 change_ingress_unavailable when the steps take longer than allowed", async (t) => {
  const f = await hooksFixture(t, {
    stepsTimeoutMs: 200,
    hooks: [testHooks({ webhook: { map: () => new Promise(() => {}) } })],
  });
  const response = await deliver(f.app, signed(change("e-1")));
  t.equal(response.statusCode, 503);
  t.same(response.json(), { error: "change_ingress_unavailable" });
  t.equal(response.headers["retry-after"], "5");
  t.equal(await countEvents(f.store), 0);
});

t.test("503 when the secret step takes longer than allowed", async (t) => {
  const f = await hooksFixture(t, {
    stepsTimeoutMs: 200,
    hooks: [testHooks({ webhook: { signature: { secrets: () => new Promise(() => {}) } } })],
  });
  const response = await deliver(f.app, signed(change("e-1")));
  t.equal(response.statusCode, 503);
  t.same(response.json(), { error: "change_ingress_unavailable" });
});

t.test("503 change_ingress_unavailable when the store is unavailable", async (t) => {
  const f = await hooksFixture(t);
  // The store's database goes away: every connection to it fails, the webhook's own too.
  const gone = await testDatabase(t);
  const store = await EventStore.open(gone.pool);
  await f.db.pool.query(`DROP DATABASE ${gone.name} WITH (FORCE)`);
  const { default: Fastify } = await import("fastify");
  const { hooksPlugin } = await import("../../src/hooks/index.ts");
  const app = Fastify();
  await app.register(
    hooksPlugin({
      registry: f.registry,
      store,
      jobs: f.jobs,
      authentication: createAuthentication({ pool: store.pool }),
    }),
  );
  t.teardown(() => app.close());
  const response = await deliver(app, signed(change("e-1")));
  t.equal(response.statusCode, 503);
  t.same(response.json(), { error: "change_ingress_unavailable" });
});

t.test("the raw bytes are what counts, whatever the Content-Type says", async (t) => {
  const f = await hooksFixture(t);
  const plain = signed(change("e-1"));
  plain.headers["content-type"] = "text/plain";
  t.equal((await deliver(f.app, plain)).statusCode, 202, "text/plain");
  const none = signed(change("e-2"));
  delete none.headers["content-type"];
  t.equal((await deliver(f.app, none)).statusCode, 202, "no Content-Type");
  const form = signed(change("e-3"));
  form.headers["content-type"] = "application/x-www-form-urlencoded"; // curl -d's default
  t.equal((await deliver(f.app, form)).statusCode, 202, "a form's type");
});

t.test("no secret, signature or signature header reaches the log", async (t) => {
  const lines: string[] = [];
  const log = createLogger("trace", { destination: { write: (line: string) => lines.push(line) } });
  const f = await hooksFixture(t, { log });
  const requests = [
    signed(change("e-1")),
    signed(change("e-2"), { secret: "wrong-secret-value" }),
    signed(change("e-3"), { timestamp: now() - 3600 }),
    signed("{not json"),
  ];
  for (const request of requests) await deliver(f.app, request);
  t.ok(lines.length > 0, "the deliveries were logged");
  const text = lines.join("\n");
  for (const request of requests) {
    const signature = request.headers["webhook-signature"]!.slice(3);
    t.notOk(text.includes(signature), "no signature");
  }
  t.notOk(text.includes(SECRET) || text.includes(OLD_SECRET), "no secret");
  t.notOk(text.includes("wrong-secret-value"), "not even a wrong one");
});
