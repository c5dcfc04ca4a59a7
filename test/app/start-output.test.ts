import { spawn } from "node:child_process";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { freePort } from "../../src/ports.ts";
import { ANNAL_BIN, annalEnv, exited, serving, spawnAnnal } from "../cli/support.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(300_000);

const BOLD_GREEN = "\x1b[1m\x1b[32m";
const SERVES =
  /annal serves http:\/\/127\.0\.0\.1:\d+; database: [^\r\n]*; configuration: the demo configuration/;

// The demo as `npm start` runs it (its identity provider included, whose library checks the
// runtime as it loads), on the suite's PostgreSQL, in one directory for both runs.
const { url: databaseUrl } = await testDatabase(t);
const dir = await mkdtemp(path.join(tmpdir(), "annal-start-output-"));
await chmod(dir, 0o755);
t.teardown(() => rm(dir, { recursive: true, force: true }));

t.test(
  "on a terminal, the line that says where annal serves is bold and green, and nothing alarms",
  async (t) => {
    // A terminal of its own: script(1) runs annal on a pseudo-terminal and copies what it
    // shows; a Ctrl-C typed into it reaches annal as a terminal's does. `exec`: script runs
    // the command through a shell, and /bin/sh (dash, when SHELL is unset as under CI) stays
    // as annal's parent in the terminal's foreground group; the Ctrl-C reached it too, and
    // whether it died of it (status 130) before annal's clean exit was a race.
    const env = annalEnv({ DATABASE_URL: databaseUrl, PORT: String(await freePort()) });
    const terminal = spawn(
      "script",
      [
        "--quiet",
        "--flush",
        "--return",
        "--command",
        `exec ${process.execPath} ${ANNAL_BIN} start`,
        "/dev/null",
      ],
      { cwd: dir, env: { ...env, TERM: "xterm-256color" }, stdio: ["pipe", "pipe", "pipe"] },
    );
    t.teardown(() => {
      if (terminal.exitCode === null && terminal.signalCode === null) terminal.kill("SIGKILL");
    });
    let shown = "";
    terminal.stdout.on("data", (chunk: Buffer) => (shown += chunk.toString()));
    terminal.stderr.on("data", (chunk: Buffer) => (shown += chunk.toString()));
    await eventually(() => SERVES.test(shown), {
      what: "annal says where it serves",
      timeout: 120_000,
    });
    const line = shown.split("\n").find((each) => SERVES.test(each))!;
    t.ok(
      line.includes(`${BOLD_GREEN}annal serves http://127.0.0.1:`),
      `the line stands out (bold, green): ${JSON.stringify(line)}`,
    );
    t.notMatch(line, /headline/, "the marker itself is not shown");
    t.notMatch(shown, /oidc-provider|Unsupported runtime|WARNING/, "no alarming line");
    t.notMatch(shown, /\bWARN\b|\bERROR\b/, "nothing logged above info");

    terminal.stdin.write("\x03");
    t.same(await exited(terminal), { code: 0, signal: null }, "Ctrl-C stops it cleanly");
  },
);

t.test("into a pipe, the same line is plain JSON, and standard error holds nothing", async (t) => {
  const annal = spawnAnnal(["start"], {
    cwd: dir,
    env: { DATABASE_URL: databaseUrl, PORT: String(await freePort()) },
  });
  t.teardown(() => {
    if (annal.exitCode === null && annal.signalCode === null) annal.kill("SIGKILL");
  });
  const served = serving(annal, 120_000);
  await served.url;
  const line = served.lines.find((each) => String(each.msg).startsWith("annal serves"))!;
  t.match(line, { level: "info", headline: true, msg: SERVES });
  t.notMatch(JSON.stringify(line), /\\u001b/, "no colour codes in JSON");
  annal.kill("SIGINT");
  t.same(await exited(annal), { code: 0, signal: null });
  t.equal(served.stderr(), "", "standard error is empty: no oidc-provider warning");
  t.same(
    served.lines.filter((each) => each.level !== "info" && each.level !== "debug"),
    [],
    "no line above info",
  );
});
