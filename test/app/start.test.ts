import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { parseConfig } from "../../src/config/index.ts";
import { MigrationMismatchError } from "../../src/db/index.ts";
import { freePort } from "../../src/ports.ts";
import { capturedLogger } from "../http/support.ts";
import { testDatabase } from "../support/postgres.ts";

async function configFor(url: string) {
  return parseConfig("", {
    path: "test.toml",
    env: { DATABASE_URL: url, PORT: String(await freePort()) },
  });
}

t.test("startAnnal serves on the configured port and stops", async (t) => {
  const { url } = await testDatabase(t);
  const { log, lines } = capturedLogger();
  const annal = await startAnnal({ config: await configFor(url), log });
  t.teardown(() => annal.stop());
  t.match(annal.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const health = await fetch(`${annal.url}/healthz`);
  t.equal(health.status, 200);
  const ready = await fetch(`${annal.url}/readyz`);
  t.equal(ready.status, 200);
  const started = lines.find((line) => String(line.msg).startsWith("annal serves"));
  t.match(started, { url: annal.url, parts: ["api", "workers", "projector"], config: "test.toml" });
  t.match(started?.database, /^postgres:\/\/.*:\*\*\*\*@/, "the password is masked");
  await annal.stop();
  await t.rejects(fetch(`${annal.url}/healthz`), "no longer listening");
});

t.test("every 401 of annal's routes carries WWW-Authenticate, failed work's too", async (t) => {
  const { url } = await testDatabase(t);
  const annal = await startAnnal({ config: await configFor(url), log: capturedLogger().log });
  t.teardown(() => annal.stop());
  for (const [method, path] of [
    ["GET", "/api/failed-work"],
    ["POST", "/api/failed-work/00000000-0000-4000-8000-000000000000/retry"],
    ["GET", "/api/changes"],
  ] as const) {
    for (const authorization of [undefined, "Bearer annal_nope"]) {
      const response = await fetch(`${annal.url}${path}`, {
        method,
        headers: authorization ? { authorization } : {},
      });
      t.equal(response.status, 401, `${method} ${path}`);
      t.match(
        response.headers.get("www-authenticate"),
        /^Bearer realm="annal"/,
        `${method} ${path}`,
      );
      t.match(await response.json(), { code: "ANNAL_UNAUTHENTICATED" });
    }
  }
});

t.test("--only api runs the HTTP server alone; --only projector runs no server", async (t) => {
  const { url } = await testDatabase(t);
  const { log } = capturedLogger();
  const api = await startAnnal({ config: await configFor(url), only: "api", log });
  t.teardown(() => api.stop());
  t.equal((await fetch(`${api.url}/readyz`)).status, 200, "readiness reads projections itself");
  await api.stop();

  const projector = await startAnnal({ config: await configFor(url), only: "projector", log });
  t.equal(projector.url, undefined);
  await projector.stop();
});

t.test("a migration mismatch is logged with both keys and nothing starts", async (t) => {
  const { url, pool } = await testDatabase(t);
  await pool.query("INSERT INTO migrations (id, name, hash) VALUES (99, 'from-the-future', 'x')");
  const { log, lines } = capturedLogger();
  const config = await configFor(url);
  await t.rejects(startAnnal({ config, log }), MigrationMismatchError);
  t.match(
    lines.find((line) => line.code === "WF_DATABASE_MIGRATION_MISMATCH"),
    { level: "fatal", recordedKey: "99_from-the-future", newestKnownKey: /^\d+_/ },
  );
  const port = config.server.port;
  await t.rejects(fetch(`http://127.0.0.1:${port}/healthz`), "no server was left listening");
});

t.test("a port in use is ANNAL_PORT_IN_USE, and what had started is stopped", async (t) => {
  const { url } = await testDatabase(t);
  const { log } = capturedLogger();
  const config = await configFor(url);
  const first = await startAnnal({ config, only: "api", log });
  t.teardown(() => first.stop());
  await t.rejects(startAnnal({ config, only: "api", log }), { code: "ANNAL_PORT_IN_USE" });
});
