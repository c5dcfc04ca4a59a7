import fc from "fast-check";
import t from "tap";
import { signDelivery } from "../../src/hooks/index.ts";
import { change, hooksFixture, SECRET } from "./fixtures/hooks.ts";

const ANSWERS = new Set([202, 400, 401, 403, 404, 409, 413, 429]);

/** Header values a client can send: visible ASCII and spaces. */
const headerText = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 80,
});

t.test("fuzzed bodies and headers never get a 500 (nor a 503)", async (t) => {
  const f = await hooksFixture(t);
  const now = () => Math.floor(Date.now() / 1000);
  const body = fc.oneof(
    fc.json({ maxDepth: 3 }),
    fc.string({ maxLength: 200 }),
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    fc
      .record({
        id: fc.string({ maxLength: 30 }),
        person: fc.string({ maxLength: 30 }),
        at: fc.oneof(
          fc.string({ maxLength: 30 }),
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        ),
        kind: fc.string({ maxLength: 30 }),
        value: fc.jsonValue({ maxDepth: 2 }),
      })
      .map((v) => JSON.stringify(v)),
    fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString("latin1")),
  );
  const headers = fc.record(
    {
      id: fc.oneof(headerText, fc.constant("msg_1")),
      timestamp: fc.oneof(
        headerText,
        fc.integer({ min: -1e6, max: 1e6 }).map((skew) => String(now() + skew)),
        fc.constant(String(now())),
      ),
      signature: fc.oneof(headerText, fc.constant("sign")),
      contentType: fc.oneof(headerText, fc.constant("application/json")),
    },
    { requiredKeys: [] },
  );
  await fc.assert(
    fc.asyncProperty(body, headers, fc.boolean(), async (payload, h, validId) => {
      const sent: Record<string, string> = {};
      if (h.id !== undefined) sent["webhook-id"] = h.id;
      if (h.timestamp !== undefined) sent["webhook-timestamp"] = h.timestamp;
      if (h.contentType !== undefined) sent["content-type"] = h.contentType;
      if (h.signature === "sign" && h.id !== undefined && h.timestamp !== undefined) {
        sent["webhook-signature"] = signDelivery(SECRET, h.id, h.timestamp, payload);
      } else if (h.signature !== undefined) {
        sent["webhook-signature"] = h.signature;
      }
      const response = await f.app.inject({
        method: "POST",
        url: validId ? "/-hooks/test/people" : "/-hooks/test/people%00",
        headers: sent,
        payload,
      });
      if (!ANSWERS.has(response.statusCode)) {
        throw new Error(`status ${response.statusCode}: ${response.body}`);
      }
      if (response.statusCode !== 202) {
        const answer = response.json() as Record<string, unknown>;
        if (Object.keys(answer).length !== 1 || typeof answer.error !== "string") {
          throw new Error(`unexpected body ${response.body}`);
        }
      }
    }),
    { numRuns: 400 },
  );

  // And valid, signed deliveries of random content are either taken or refused with a 4xx.
  await fc.assert(
    fc.asyncProperty(
      fc.string({ maxLength: 20 }),
      fc.jsonValue({ maxDepth: 3 }),
      async (id, value) => {
        const payload = JSON.stringify(change(`fuzz-${id}`, { value }));
        const stamp = String(now());
        const response = await f.app.inject({
          method: "POST",
          url: "/-hooks/test/people",
          headers: {
            "webhook-id": "msg_fuzz",
            "webhook-timestamp": stamp,
            "webhook-signature": signDelivery(SECRET, "msg_fuzz", stamp, payload),
          },
          payload,
        });
        if (!ANSWERS.has(response.statusCode)) {
          throw new Error(`status ${response.statusCode}: ${response.body}`);
        }
      },
    ),
    { numRuns: 200 },
  );
  t.pass("no 5xx");
});
