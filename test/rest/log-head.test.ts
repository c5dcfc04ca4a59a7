import pino from "pino";
import t from "tap";
import { startChainer } from "../../src/audit/index.ts";
import { eventually } from "../support/eventually.ts";
import { OpenApiResponses } from "../support/openapi-responses.ts";
import { restHarness } from "./fixtures/harness.ts";

t.test("GET /api/log/head serves the chain's head as the chainer moves it", async (t) => {
  const h = await restHarness(t);
  const document = new OpenApiResponses((await h.get("/api.json")).json());
  const asDocumented = (response: Awaited<ReturnType<typeof h.get>>) =>
    t.same(
      document.departures({
        method: "GET",
        path: "/api/log/head",
        status: response.statusCode,
        contentType: response.headers["content-type"] as string | undefined,
        body: response.body,
      }),
      [],
      "as the OpenAPI document describes it",
    );

  const chainer = startChainer({ pool: h.pool, log: pino({ level: "silent" }), interval: 20 });
  t.teardown(() => chainer.stop());
  await h.store.appendToStream("s", [{ type: "A", data: { n: 1 } }]);
  const appended = await h.store.appendToStream("s", [{ type: "A", data: { n: 2 } }]);
  const last = appended.events[0]!;
  const head = await eventually(
    async () => {
      const response = await h.get("/api/log/head");
      return (response.json() as { position: number }).position >= last.position
        ? response
        : undefined;
    },
    { what: "the chainer reaches the last append" },
  );
  t.equal(head.statusCode, 200);
  t.equal(head.headers["cache-control"], "no-store");
  const body = head.json();
  t.match(body, { position: last.position, hash: /^[0-9a-f]{64}$/, time: String });
  const stored = await h.pool.query<{ hash: Buffer }>(
    "SELECT hash FROM event_chain WHERE position = $1",
    [last.position],
  );
  t.equal(body.hash, stored.rows[0]?.hash.toString("hex"));
  asDocumented(head);

  const anonymous = await h.app.inject({ method: "GET", url: "/api/log/head" });
  t.equal(anonymous.statusCode, 401, "like every read endpoint, it needs a credential");
  asDocumented(anonymous);
});
