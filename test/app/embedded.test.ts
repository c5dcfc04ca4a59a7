import { existsSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import { freePort } from "../../src/ports.ts";
import { configDir, exited, serving, spawnAnnal } from "../cli/support.ts";
import { capturedLogger } from "../http/support.ts";
import { eventually } from "../support/eventually.ts";

// One data directory for the whole story, since every initdb costs a second or two: a first
// run writes an event, a second run is killed with SIGKILL and leaves its lock behind (its
// PostgreSQL stops with it), and a third run recovers it and still finds the event.
t.test("the embedded database is kept across runs and recovered after a kill", async (t) => {
  const { dir, file } = await configDir(
    t,
    `[database]\ndataDir = "state"\n[log]\nlevel = "info"\n`,
  );
  const state = path.join(dir, "state");
  const configure = async () =>
    loadConfig({ configPath: file, cwd: dir, env: { PORT: String(await freePort()) } });
  const { log, lines } = capturedLogger();

  const first = await startAnnal({ config: await configure(), log });
  t.teardown(() => first.stop());
  t.equal((await fetch(`${first.url}/healthz`)).status, 200);
  t.match(
    lines.find((line) => String(line.msg).startsWith("annal serves")),
    { database: `embedded PostgreSQL in ${path.join(state, "postgres")}`, config: file },
  );
  await first.store.appendToStream("embedded-check", [{ type: "Written", data: { run: 1 } }]);
  await first.stop();
  t.notOk(
    existsSync(path.join(state, "postgres", "postmaster.pid")),
    "a clean stop leaves no lock",
  );

  const killed = spawnAnnal(["start"], { cwd: dir, env: { PORT: String(await freePort()) } });
  t.teardown(() => {
    if (killed.exitCode === null) killed.kill("SIGKILL");
  });
  const url = await serving(killed).url;
  t.equal((await fetch(`${url}/healthz`)).status, 200);
  killed.kill("SIGKILL");
  await exited(killed);
  t.ok(existsSync(path.join(state, "annal.pid")), "the killed run left its lock");
  // Its PostgreSQL does not outlive it: the server's watchdog asks for a fast shutdown.
  await eventually(() => !existsSync(path.join(state, "postgres", "postmaster.pid")), {
    what: "the killed run's PostgreSQL stopped",
  });

  const third = await startAnnal({ config: await configure(), log });
  t.teardown(() => third.stop());
  t.equal((await fetch(`${third.url}/healthz`)).status, 200);
  const events = await third.store.readStream("embedded-check");
  t.same(
    events.map((event) => event.data),
    [{ run: 1 }],
    "the first run's event is still there",
  );
  await third.stop();
});

t.test(
  "a second annal uses the running annal's embedded database and leaves it running",
  async (t) => {
    const { dir, file } = await configDir(t, `[database]\ndataDir = "state"\n`);
    const configure = async () =>
      loadConfig({ configPath: file, cwd: dir, env: { PORT: String(await freePort()) } });
    const { log } = capturedLogger();
    const running = spawnAnnal(["start"], { cwd: dir, env: { PORT: String(await freePort()) } });
    t.teardown(() => {
      if (running.exitCode === null) running.kill("SIGKILL");
    });
    const url = await serving(running).url;

    // `annal token`, `annal replay` and friends beside `npm start`: the same database.
    const second = await startAnnal({ config: await configure(), only: "api", log });
    await second.store.appendToStream("shared-check", [{ type: "Check", data: { from: 2 } }]);
    await second.stop();
    t.equal((await fetch(`${url}/readyz`)).status, 200, "the first keeps its database");
    const third = await startAnnal({ config: await configure(), only: "api", log });
    t.same(
      (await third.store.readStream("shared-check")).map((e) => e.data),
      [{ from: 2 }],
      "both wrote to one database",
    );
    await third.stop();
    running.kill("SIGTERM");
    t.equal((await exited(running)).code, 0);
  },
);
