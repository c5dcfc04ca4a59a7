import { createInterface } from "node:readline";
import t from "tap";
import { freePort } from "../../src/ports.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { configDir, exited, runAnnal, serving, spawnAnnal } from "./support.ts";

const messages = (stdout: string) =>
  stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { msg: string }).msg);

t.test(
  "annal logs prints the log of the annal started here, from --since, and --follow prints new lines as they come",
  async (t) => {
    const { url: databaseUrl } = await testDatabase(t);
    const { dir } = await configDir(t, "");
    const env = { DATABASE_URL: databaseUrl, PORT: String(await freePort()) };
    const annal = spawnAnnal(["start"], { cwd: dir, env });
    t.teardown(() => {
      if (annal.exitCode === null) annal.kill("SIGKILL");
    });
    await serving(annal).url;

    const all = await runAnnal(["logs"], { cwd: dir, env });
    t.equal(all.code, 0, all.stderr);
    t.ok(
      messages(all.stdout).some((msg) => msg.startsWith("annal serves")),
      "the start's lines, as JSON",
    );
    const recent = await runAnnal(["logs", "--since", "now-1h"], { cwd: dir, env });
    t.equal(recent.stdout, all.stdout);
    const future = await runAnnal(["logs", "--since", "9999-01-01T00:00:00Z"], { cwd: dir, env });
    t.equal(future.code, 0);
    t.equal(future.stdout, "");

    // Following from now: the lines of the stop arrive as annal writes them.
    const follow = spawnAnnal(["logs", "--follow", "--since", new Date().toISOString()], {
      cwd: dir,
      env,
    });
    t.teardown(() => {
      if (follow.exitCode === null) follow.kill("SIGKILL");
    });
    const followed: string[] = [];
    createInterface({ input: follow.stdout! }).on("line", (line) => followed.push(line));
    const stopped = await runAnnal(["stop"], { cwd: dir, env });
    t.equal(stopped.code, 0, stopped.stderr);
    await exited(annal);
    await eventually(() => messages(followed.join("\n")).includes("annal stopped"), {
      what: "annal logs --follow prints the stop",
    });
    t.notOk(
      messages(followed.join("\n")).some((msg) => msg.startsWith("annal serves")),
      "nothing before --since",
    );
    follow.kill("SIGTERM");
    t.same(await exited(follow), { code: 0, signal: null }, "Ctrl-C ends following");
  },
);

t.test(
  "annal logs without a log here is ANNAL_NOT_RUNNING; a bad --since is ANNAL_USAGE",
  async (t) => {
    const { dir } = await configDir(t, "");
    const none = await runAnnal(["logs"], { cwd: dir });
    t.equal(none.code, 1);
    t.match(none.stderr, /^annal: ANNAL_NOT_RUNNING: .*no log file .*annal\.log\n/);
    t.match(none.stderr, /annal: hint: /);
    const bad = await runAnnal(["logs", "--since", "whenever"], { cwd: dir });
    t.equal(bad.code, 1);
    t.match(bad.stderr, /^annal: ANNAL_USAGE: --since: "whenever" is not a moment\n/);
  },
);
