import { request } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import t from "tap";
import { signDelivery } from "../../src/hooks/index.ts";
import { countEvents, countJobs, hooksFixture, SECRET } from "./fixtures/hooks.ts";

/** A change event whose `value` holds `byte`, which no UTF-8 text has: 0xFE and 0xFF never occur. */
function invalidUtf8Body(byte: number): Buffer {
  return Buffer.concat([
    Buffer.from('{"id":"e-1","person":"p-1","at":"2026-11-22T08:30:00Z","value":"'),
    Buffer.from([byte]),
    Buffer.from('"}'),
  ]);
}

t.test("a body that is not UTF-8 is 400 invalid_request_body, never a replay", async (t) => {
  const f = await hooksFixture(t);
  const library = new Webhook(SECRET, { format: "raw" });
  const senders: [string, (id: string, at: number, body: Buffer) => string][] = [
    // The Standard Webhooks library signs the text it decodes the bytes to.
    [
      "signed by the Standard Webhooks library",
      (id, at, body) => library.sign(id, new Date(at * 1000), body),
    ],
    // A sender that signs the exact bytes it sends.
    ["signed over the exact bytes", (id, at, body) => signDelivery(SECRET, id, at, body)],
  ];
  for (const [how, sign] of senders) {
    // Two different bodies with one eventId: decoded with U+FFFD they would read the same.
    for (const byte of [0xfe, 0xff]) {
      const id = `msg_${how.length}_${byte}`;
      const at = Math.floor(Date.now() / 1000);
      const body = invalidUtf8Body(byte);
      const response = await f.app.inject({
        method: "POST",
        url: "/-hooks/test/people",
        headers: {
          "content-type": "application/json",
          "webhook-id": id,
          "webhook-timestamp": String(at),
          "webhook-signature": sign(id, at, body),
        },
        payload: body,
      });
      t.equal(response.statusCode, 400, `${how}, byte ${byte.toString(16)}`);
      t.same(response.json(), { error: "invalid_request_body" });
    }
  }
  t.equal(await countEvents(f.store), 0, "nothing stored");
  t.equal(await countJobs(f.db), 0);
});

interface Delivery {
  readonly status?: number;
  readonly body?: string;
  readonly error?: string;
}

/**
 * Posts `bytes` of body to `url` as a sender that writes all of it before it reads the answer:
 * 64 KiB chunks handed to the socket as it takes them, with a Content-Length or chunked. (The
 * chunks are queued at once: Node's client emits no more `drain` once an early answer ended.)
 */
function streamDelivery(url: URL, bytes: number, chunked: boolean): Promise<Delivery> {
  return new Promise((resolve) => {
    const at = Math.floor(Date.now() / 1000);
    const req = request(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": `msg_${Math.random().toString(36).slice(2)}`,
        "webhook-timestamp": String(at),
        "webhook-signature": `v1,${Buffer.alloc(32).toString("base64")}`,
        ...(chunked ? {} : { "content-length": String(bytes) }),
      },
    });
    let answered: { status?: number; body: string } | undefined;
    req.on("response", (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (text: string) => (body += text));
      response.on("end", () => {
        answered = { status: response.statusCode, body };
        if (req.writableFinished) resolve(answered);
      });
    });
    req.on("error", (error) => resolve({ ...answered, error: String(error) }));
    req.on("finish", () => {
      if (answered) resolve(answered);
    });
    const chunk = Buffer.alloc(64 * 1024, "x");
    for (let written = 0; written < bytes; written += chunk.length) {
      req.write(chunk.subarray(0, Math.min(chunk.length, bytes - written)));
    }
    req.end();
  });
}

t.test("a body over the limit always gets its 413, however much the sender streams", async (t) => {
  const f = await hooksFixture(t);
  await f.app.listen({ host: "127.0.0.1", port: 0 });
  const { port } = f.app.server.address() as AddressInfo;
  const url = new URL(`http://127.0.0.1:${port}/-hooks/test/people`);
  const tenMegabytes = 10 * 1024 * 1024;
  for (let round = 1; round <= 4; round++) {
    for (const chunked of [false, true]) {
      const what = `round ${round}, ${chunked ? "chunked" : "with a Content-Length"}`;
      const delivery = await streamDelivery(url, tenMegabytes, chunked);
      t.same(delivery, { status: 413, body: '{"error":"request_too_large"}' }, what);
    }
  }
  t.equal(await countEvents(f.store), 0);
});
