import { writeFile } from "node:fs/promises";
import path from "node:path";
import t from "tap";
import { freePort } from "../../src/ports.ts";
import type { AnnalStatus } from "../../src/operations/index.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { startSlapd } from "../support/slapd.ts";
import { configDir, exited, runAnnal, serving, spawnAnnal } from "./support.ts";

type StatusJson = Omit<AnnalStatus, "processes"> & {
  processes: (Omit<AnnalStatus["processes"][number], "startedAt" | "lastSeenAt"> & {
    startedAt: string;
    lastSeenAt: string;
  })[];
};

async function status(dir: string, env: Record<string, string>): Promise<StatusJson> {
  const run = await runAnnal(["status", "--json"], { cwd: dir, env });
  if (run.code !== 0) throw new Error(`annal status failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as StatusJson;
}

t.test(
  "annal status lists every process attached, who holds capture, the projections, queues, failed work and access; a killed one shows as gone",
  async (t) => {
    const db = await testDatabase(t);
    const slapd = await startSlapd();
    t.teardown(() => slapd.stop());
    const toml = `[server]
port = ${await freePort()}

[directory]
url = "${slapd.url}"
bindDN = "${slapd.bindDN}"
password = "\${LDAP_PASSWORD}"
base = "dc=example,dc=org"

[[directory.types]]
name = "user"
base = "ou=people,dc=example,dc=org"
filter = "(objectClass=inetOrgPerson)"

[authorization.grants]
read = ["cn=readers,ou=groups,dc=example,dc=org"]

[authorization.activate]
version = 3
by = "the status test"
`;
    const { dir } = await configDir(t, toml);
    const env = { DATABASE_URL: db.url, LDAP_PASSWORD: slapd.password };
    const whole = spawnAnnal(["start"], { cwd: dir, env });
    t.teardown(() => {
      if (whole.exitCode === null) whole.kill("SIGKILL");
    });
    await serving(whole).url;
    // A projector alone, from a directory of its own (no server there).
    const { dir: other } = await configDir(
      t,
      toml.replace(/^port = \d+$/m, `port = ${await freePort()}`),
    );
    const projector = spawnAnnal(["start", "--only", "projector"], { cwd: other, env });
    let projectorErr = "";
    projector.stderr!.on("data", (chunk: Buffer) => (projectorErr += chunk.toString()));
    projector.stdout!.resume();
    t.teardown(() => {
      if (projector.exitCode === null) projector.kill("SIGKILL");
    });

    let last: StatusJson | undefined;
    const both = await eventually(
      async () => {
        const now = (last = await status(dir, env));
        return now.processes.length === 2 && now.capture.holder !== null ? now : undefined;
      },
      { what: "both processes registered and capture held", timeout: 60_000 },
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; last status: ${JSON.stringify(last)}; ${projectorErr}`);
    });
    const [first, second] = both.processes;
    t.same(first!.parts, ["api", "workers", "projector"]);
    t.equal(first!.pid, whole.pid);
    t.match(first!.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    t.same(second!.parts, ["projector"]);
    t.equal(second!.pid, projector.pid);
    t.equal(first!.gone, false);
    t.match(first!.version, /^\d+\.\d+\.\d+/);
    // Capture runs with the workers: the whole annal holds it.
    t.equal(both.capture.holder!.pid, whole.pid);
    t.equal(both.capture.holder!.processId, first!.id);
    t.ok(both.projections.length > 0);
    for (const projection of both.projections) t.type(projection.lag, "number");
    t.equal(both.failedWork, 0);
    t.equal(both.access!.version, 3);
    t.equal(both.access!.activatedBy, "the status test");
    t.ok(Array.isArray(both.queues));

    // The human form: a table of processes and the rest.
    const human = await runAnnal(["status"], { cwd: dir, env });
    t.equal(human.code, 0, human.stderr);
    t.match(human.stdout, /processes: 2 running/);
    t.match(human.stdout, /parts\s+host\s+pid\s+version\s+started\s+last seen\s+state/);
    t.match(human.stdout, new RegExp(`capture: held by pid ${whole.pid} on `));
    t.match(human.stdout, /access: version 3, activated by the status test/);

    // Killed, the projector's row stays; once not seen for a while it shows as gone. (Its
    // last heartbeat is moved back rather than waited for.)
    projector.kill("SIGKILL");
    await exited(projector);
    await db.pool.query(
      "UPDATE annal_processes SET last_seen_at = now() - interval '1 minute' WHERE pid = $1",
      [projector.pid],
    );
    const after = await status(dir, env);
    t.same(
      after.processes.map((p) => [p.pid, p.gone]),
      [
        [whole.pid, false],
        [projector.pid, true],
      ],
    );
    const listed = await runAnnal(["status"], { cwd: dir, env });
    t.match(listed.stdout, /processes: 1 running/);
    t.match(listed.stdout, /\bgone\b/);

    // annal stop ends the whole one cleanly: its row goes with it.
    const stopped = await runAnnal(["stop"], { cwd: dir, env });
    t.equal(stopped.code, 0, stopped.stderr);
    t.match(stopped.stdout, new RegExp(`annal \\(pid ${whole.pid}\\) stopped`));
    t.same(await exited(whole), { code: 0, signal: null });
    const rows = await db.pool.query<{ pid: number }>("SELECT pid FROM annal_processes");
    t.same(
      rows.rows.map((r) => r.pid),
      [projector.pid],
    );
  },
);

t.test("annal stop with nothing started here is ANNAL_NOT_RUNNING with a hint", async (t) => {
  const { dir } = await configDir(t, "");
  const run = await runAnnal(["stop"], { cwd: dir });
  t.equal(run.code, 1);
  t.match(
    run.stderr,
    /^annal: ANNAL_NOT_RUNNING: no annal started from here runs \(.*\): no pid file\n/,
  );
  t.match(run.stderr, /annal: hint: annal start runs one here/);
});

t.test("annal stop removes a pid file whose process is gone", async (t) => {
  const { dir } = await configDir(t, "");
  await import("node:fs/promises").then((fs) => fs.mkdir(path.join(dir, ".annal")));
  const gone = spawnAnnal(["--version"], { cwd: dir });
  await exited(gone);
  const file = path.join(dir, ".annal", "annal.process");
  await writeFile(file, JSON.stringify({ pid: gone.pid, startedAt: "x", log: "annal.log" }));
  const run = await runAnnal(["stop"], { cwd: dir });
  t.equal(run.code, 1);
  t.match(run.stderr, /ANNAL_NOT_RUNNING: .*its process \d+ is gone/);
  const again = await runAnnal(["stop"], { cwd: dir });
  t.match(again.stderr, /no pid file/);
});

t.test(
  "annal stop of a process that outlives the grace period is ANNAL_STOP_TIMEOUT, naming kill -KILL",
  async (t) => {
    const { dir } = await configDir(t, "");
    // A Node.js process that ignores SIGTERM, in annal's place.
    const { spawn } = await import("node:child_process");
    const stubborn = spawn(
      process.execPath,
      [
        "-e",
        "process.on('SIGTERM', () => console.log('ignored')); console.log('ready'); process.stdin.resume()",
      ],
      // Its open stdin keeps it alive until it is killed.
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    t.teardown(() => stubborn.kill("SIGKILL"));
    await new Promise((resolve) => stubborn.stdout.once("data", resolve));
    const { mkdir } = await import("node:fs/promises");
    await mkdir(path.join(dir, ".annal"));
    await writeFile(
      path.join(dir, ".annal", "annal.process"),
      JSON.stringify({ pid: stubborn.pid, startedAt: new Date().toISOString(), log: "annal.log" }),
    );
    const run = await runAnnal(["stop", "--timeout", "1s"], { cwd: dir });
    t.equal(run.code, 1);
    t.match(
      run.stderr,
      new RegExp(
        `annal: ANNAL_STOP_TIMEOUT: annal \\(pid ${stubborn.pid}\\) was asked to stop \\(SIGTERM\\) and still runs after 1 s`,
      ),
    );
    t.match(run.stderr, new RegExp(`annal: hint: .*kill -KILL ${stubborn.pid}`));
    t.equal(stubborn.exitCode, null, "still running");

    const bad = await runAnnal(["stop", "--timeout", "soon"], { cwd: dir });
    t.match(bad.stderr, /annal: ANNAL_USAGE: --timeout soon/);
  },
);

t.test(
  "annal status on a database no annal has started on says so, and fails on none",
  async (t) => {
    const db = await testDatabase(t);
    const { dir } = await configDir(t, "");
    const run = await runAnnal(["status"], { cwd: dir, env: { DATABASE_URL: db.url } });
    t.equal(run.code, 0, run.stderr);
    t.match(
      run.stdout,
      /^database: postgres:\/\/.*, over (the Unix socket \/.*\.s\.PGSQL\.\d+|TCP to .*:\d+)\n\nprocesses: 0 running\n/,
      "how it reached the database first",
    );
    t.match(run.stdout, /capture: held by no process/);
    t.match(run.stdout, /queues:\n {2}no work waiting/);
    t.match(run.stdout, /failed work: 0\n/);
    t.match(run.stdout, /access: no Access Configuration is active \(ANNAL_ACCESS_NOT_ACTIVE\)/);
  },
);
