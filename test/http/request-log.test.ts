import { Writable } from "node:stream";
import t from "tap";
import { parseConfig } from "../../src/config/index.ts";
import { createPool } from "../../src/db/index.ts";
import { createServer } from "../../src/http/index.ts";
import { createLogger } from "../../src/logger.ts";
import { testServer } from "./support.ts";

/** A pool that is never asked: these routes do not touch the database. */
function idlePool(t: { teardown(fn: () => unknown): void }) {
  const pool = createPool("postgres://nobody@127.0.0.1:1/none", 1);
  t.teardown(() => pool.end());
  return pool;
}

t.test("N requests give N info lines: method, route, status, time; nothing else", async (t) => {
  const { server, logged } = testServer(t, { pool: idlePool(t) });
  server.get("/people/:uid", async () => ({ ok: true }));
  server.post("/people", async (_request, reply) => reply.code(201).send({}));
  const requests = [
    { method: "GET", url: "/people/ada", route: "/people/:uid", status: 200 },
    { method: "GET", url: "/people/bob?page=2", route: "/people/:uid", status: 200 },
    { method: "POST", url: "/people", route: "/people", status: 201 },
    { method: "GET", url: "/nowhere", route: "(unmatched)", status: 404 },
    { method: "GET", url: "/people/eve", route: "/people/:uid", status: 200 },
  ] as const;
  for (const { method, url } of requests) await server.inject({ method, url });

  t.equal(logged.lines.length, requests.length, logged.text.join("\n"));
  requests.forEach(({ method, url, route, status }, i) => {
    const line = logged.lines[i]!;
    t.match(line, { level: "info", method, route, url, status, reqId: String });
    t.type(line.ms, "number");
    const refusal = status === 404 ? " ANNAL_NOT_FOUND: no route for GET /nowhere" : "";
    t.equal(line.msg, `${method} ${url} ${status} ${String(line.ms)} ms${refusal}`);
  });
  t.match(logged.lines[3], { code: "ANNAL_NOT_FOUND", error: "no route for GET /nowhere" });
  t.equal(logged.text.filter((text) => text.includes("\n")).length, 0, "every line is one line");
});

t.test("a route's log level applies: /metrics adds no line at info", async (t) => {
  const { server, logged } = testServer(t, { pool: idlePool(t) });
  await server.inject({ method: "GET", url: "/metrics" });
  t.same(logged.lines, []);
});

t.test("at a terminal a request is one line: its message", async (t) => {
  let text = "";
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const server = createServer({
    config: parseConfig("", { path: "test.toml", env: {} }),
    pool: idlePool(t),
    projectorStatus: async () => [],
    log: createLogger("info", { pretty: true, destination }),
  });
  t.teardown(() => server.close());
  server.get("/people/:uid", async () => ({ ok: true }));
  await server.inject({ method: "GET", url: "/people/ada" });
  await server.inject({ method: "GET", url: "/nowhere" });
  const lines = text.split("\n");
  t.equal(lines.length, 3, text);
  t.match(lines[0], /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: GET \/people\/ada 200 [\d.]+ ms$/);
  t.match(
    lines[1],
    /INFO: GET \/nowhere 404 [\d.]+ ms ANNAL_NOT_FOUND: no route for GET \/nowhere$/,
  );
  t.equal(lines[2], "");
});

t.test("the server is made without a Fastify deprecation warning", async (t) => {
  const warnings: string[] = [];
  const onWarning = (warning: Error & { code?: string }) =>
    warnings.push(`${warning.name} ${warning.code ?? ""}`);
  process.on("warning", onWarning);
  t.teardown(() => process.off("warning", onWarning));
  const { server } = testServer(t, { pool: idlePool(t) });
  await server.ready();
  // Process warnings are emitted on the next tick.
  await new Promise<void>((resolve) => setImmediate(resolve));
  t.same(
    warnings.filter((w) => w.startsWith("FastifyDeprecation")),
    [],
  );
});
