import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { freePort } from "../../src/ports.ts";
import { configDir, exited, runAnnal, serving, spawnAnnal } from "../cli/support.ts";

t.setTimeout(300_000);

/**
 * `npm start` twice on one data directory: the second says ANNAL_ALREADY_RUNNING with the
 * first's pid and URL and touches none of its files (it used to rewrite the demo slapd's
 * configuration). Ctrl-C, which a terminal sends to the whole process group, stops annal
 * cleanly every time: exit 0, no unhandled error, no error logged, no lock left behind. The
 * embedded PostgreSQL is not in that group: when it was, it could shut down while annal's
 * parts still used it (CI saw it once in six runs).
 */
t.test("a second annal start on a running one's data directory changes nothing", async (t) => {
  const slapdPort = await freePort();
  const { dir } = await configDir(
    t,
    `[database]
dataDir = "state"

[directory]
url = "ldap://127.0.0.1:${slapdPort}"
bindDN = "cn=admin,dc=example,dc=org"
password = "\${LDAP_PASSWORD:-annal-demo}"
base = "dc=example,dc=org"

[directory.demo]
port = ${slapdPort}
dataDir = "state/slapd"
`,
  );
  const first = spawnAnnal(["start"], { cwd: dir, env: { PORT: String(await freePort()) } });
  t.teardown(() => {
    if (first.exitCode === null) first.kill("SIGKILL");
  });
  const url = await serving(first, 120_000).url;
  const state = path.join(dir, "state");

  const files = ["annal.instance", "annal.pid", "slapd/slapd.conf"].map((f) => path.join(state, f));
  const before = files.map((file) => ({
    text: readFileSync(file, "utf8"),
    mtime: statSync(file).mtimeMs,
  }));
  t.match(before[0]!.text, `${first.pid}\n${url}\n`, "the instance names its pid and URL");

  const second = await runAnnal(["start"], { cwd: dir, env: { PORT: String(await freePort()) } });
  t.equal(second.code, 1);
  t.ok(
    second.stderr.includes(
      `annal: ANNAL_ALREADY_RUNNING: annal already runs on ${state} (pid ${first.pid}, ${url})`,
    ),
    second.stderr,
  );
  t.match(second.stderr, /^annal: hint: .*kill \d+/m);
  t.same(
    files.map((file) => ({ text: readFileSync(file, "utf8"), mtime: statSync(file).mtimeMs })),
    before,
    "none of the running annal's files changed",
  );
  t.equal((await fetch(`${url}/healthz`)).status, 200, "the first still serves");

  first.kill("SIGINT");
  t.same(await exited(first), { code: 0, signal: null });
  t.notOk(existsSync(files[0]!), "a clean stop releases the data directory");
});

t.test("Ctrl-C to the process group stops annal cleanly, every time", async (t) => {
  const { dir } = await configDir(t, `[database]\ndataDir = "state"\n`);
  for (let run = 1; run <= 6; run++) {
    const annal = spawnAnnal(["start"], {
      cwd: dir,
      env: { PORT: String(await freePort()) },
      group: true,
    });
    t.teardown(() => {
      if (annal.exitCode === null) process.kill(-annal.pid!, "SIGKILL");
    });
    const served = serving(annal);
    const url = await served.url;
    await fetch(`${url}/readyz`);
    // Out of the terminal's reach: annal stops it last, after every part that uses it.
    const postmaster = readFileSync(path.join(dir, "state", "postgres", "postmaster.pid"), "utf8");
    t.not(
      processGroup(Number.parseInt(postmaster, 10)),
      processGroup(annal.pid!),
      `run ${run}: the embedded PostgreSQL runs in a process group of its own`,
    );
    // As a terminal does: the signal reaches annal's whole process group.
    process.kill(-annal.pid!, "SIGINT");
    const ended = await exited(annal);
    t.same(ended, { code: 0, signal: null }, `run ${run} exits 0`);
    t.notMatch(served.stderr(), /unhandled|57P01|Error/i, `run ${run}: nothing unhandled`);
    t.same(
      served.lines.filter((line) => line.level === "error" || line.level === "fatal"),
      [],
      `run ${run}: no error logged`,
    );
    for (const lock of ["annal.pid", "annal.instance"]) {
      t.notOk(existsSync(path.join(dir, "state", lock)), `run ${run}: no ${lock} left`);
    }
  }
});

/** The process group of `pid` (`/proc/<pid>/stat`: the fifth field, after the command's name). */
function processGroup(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}
