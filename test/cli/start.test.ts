import t from "tap";
import { freePort } from "../../src/ports.ts";
import { testDatabase } from "../support/postgres.ts";
import { configDir, exited, serving, spawnAnnal } from "./support.ts";

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  t.test(`annal start serves /healthz on PORT and exits 0 on ${signal}`, async (t) => {
    const { url: databaseUrl } = await testDatabase(t);
    const { dir } = await configDir(t, "");
    const port = await freePort();
    const child = spawnAnnal(["start"], {
      cwd: dir,
      env: { DATABASE_URL: databaseUrl, PORT: String(port) },
    });
    t.teardown(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    const annal = serving(child);
    const url = await annal.url;
    t.equal(url, `http://127.0.0.1:${port}`);
    const health = await fetch(`${url}/healthz`);
    t.equal(health.status, 200);
    t.same(await health.json(), { status: "ok" });

    child.kill(signal);
    const { code, signal: killedBy } = await exited(child);
    t.equal(code, 0, annal.stderr());
    t.equal(killedBy, null);
    t.equal(annal.stderr(), "");
    t.ok(annal.lines.some((line) => line.msg === "annal stopped"));
    await t.rejects(fetch(`${url}/healthz`), "no longer listening");
  });
}
