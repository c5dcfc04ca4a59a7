/**
 * annal as a package, as a newcomer gets it: `npm pack` (in a copy of this tree, so the
 * checkout's package.json is never rewritten under other tests), `annal init` run from the
 * packed tarball, `npm install` of the project from the tarball, then in the project:
 * `npx annal --version --json`, both entry points imported with their types (tsc), `npm test`
 * (the starter's workflow tests through `annal test`), every practice task failing as shipped
 * and passing with its solution, `npx annal start` up to /readyz, and a scenario driven with
 * `--as` (`annal refresh`) against the project's own hooks and workflows: issue 40's "Done
 * when" in one test. One pack and one install serve every step.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import {
  chmod,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { freePort } from "../../src/ports.ts";
import { exited } from "../cli/support.ts";
import { eventually } from "../support/eventually.ts";

// A pack, an install and twelve task runs: past 15 minutes on a loaded machine.
t.setTimeout(1_800_000);

const ROOT = path.resolve(import.meta.dirname, "../..");
/** What a pack needs of the tree; the rest (.git, node_modules, dist, state) stays out. */
const LEFT_OUT = new Set([".git", "node_modules", "dist", ".annal", ".tap", "coverage", "COMMIT"]);

/** The environment of a command a user types: none of the outer npm's or the suite's. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith("npm_") || name === "INIT_CWD" || name.startsWith("ANNAL_")) continue;
    if (name === "DATABASE_URL" || name === "PORT" || name.startsWith("TAP")) continue;
    env[name] = value;
  }
  return { ...env, ...extra };
}

interface Run {
  readonly code: number | null;
  readonly out: string;
}

async function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<Run> {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: userEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const { code } = await exited(child);
  return { code, out };
}

const base = await mkdtemp(path.join(tmpdir(), "annal-pack-"));
await chmod(base, 0o755); // the embedded PostgreSQL runs as `postgres` when this runs as root
t.teardown(() => rm(base, { recursive: true, force: true, maxRetries: 5 }));
const commit = execFileSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
const own = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")) as {
  version: string;
};
const tarball = path.join(base, `annal-${own.version}.tgz`);
const extracted = path.join(base, "extracted");
const project = path.join(base, "hr-flows");
const extractedBin = path.join(extracted, "package", "bin", "annal.js");

// The steps run in order, each a subtest that uses what the one before made.
t.test("npm pack gives a tarball with built code, its data files and no sources", async (t) => {
  // A copy of the tree (its node_modules linked), so that prepack rewrites no file of the
  // checkout.
  const tree = path.join(base, "tree");
  await mkdir(tree);
  for (const name of await readdir(ROOT)) {
    if (LEFT_OUT.has(name) || name.endsWith(".tgz")) continue;
    await cp(path.join(ROOT, name), path.join(tree, name), {
      recursive: true,
      filter: (source) => !source.includes(`${path.sep}docs${path.sep}screenshots`),
    });
  }
  await symlink(path.join(ROOT, "node_modules"), path.join(tree, "node_modules"));
  const packed = await run("npm", ["pack", "--silent", "--pack-destination", base], {
    cwd: tree,
    env: { ANNAL_COMMIT: commit },
  });
  t.equal(packed.code, 0, packed.out);
  const listing = execFileSync("tar", ["tzf", tarball], { encoding: "utf8" }).split("\n");
  for (const file of [
    "package/bin/annal.js",
    "package/dist/src/cli.js",
    "package/dist/src/index.d.ts",
    "package/dist/src/testing/index.d.ts",
    "package/migrations/1_event-store.sql",
    "package/ops/demo/annal.toml",
    "package/starter/workflows/welcome.ts",
    "package/src/web/client/main.ts",
    "package/COMMIT",
  ]) {
    t.ok(listing.includes(file), file);
  }
  t.notOk(listing.includes("package/src/cli.ts"), "no TypeScript sources of annal's own code");
  t.notOk(
    listing.some((file) => file.startsWith("package/test/")),
    "no tests",
  );
});

t.test("annal init from the tarball writes the project", async (t) => {
  // The tarball's own code (extracted; its dependencies this tree's).
  await mkdir(extracted);
  execFileSync("tar", ["xzf", tarball, "-C", extracted]);
  await symlink(path.join(ROOT, "node_modules"), path.join(extracted, "package", "node_modules"));
  const init = await run(
    process.execPath,
    [extractedBin, "init", project, "--annal", `file:${tarball}`],
    { cwd: base },
  );
  t.equal(init.code, 0, init.out);
  t.match(init.out, "wrote workflows/welcome.ts\n");
  const again = await run(process.execPath, [extractedBin, "init", project], { cwd: base });
  t.equal(again.code, 1);
  t.match(again.out, /^annal: ANNAL_INIT_DIRECTORY_NOT_EMPTY: /m);
});

t.test("the project installs and runs annal from node_modules", async (t) => {
  // From the tarball; the registry's packages from npm's cache where it has them.
  const installed = await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], {
    cwd: project,
  });
  t.equal(installed.code, 0, installed.out);
  const version = await run("npx", ["annal", "--version", "--json"], { cwd: project });
  t.equal(version.code, 0, version.out);
  t.same(JSON.parse(version.out.trim()), { version: own.version, commit });
});

t.test("both entry points import with their types", async (t) => {
  await mkdir(path.join(project, "typed"));
  await writeFile(
    path.join(project, "typed", "entry-points.ts"),
    `import { defineWorkflow, NonRetryableError } from "annal";
import { workflowTest, type WorkflowTest } from "annal/testing";
import welcome from "../workflows/welcome.ts";

export const name: string = welcome.name;
export const error: Error = new NonRetryableError("no");
export const test: Promise<WorkflowTest> = workflowTest({ workflows: [welcome] });
// Typed, not any: a definition without run is refused.
// @ts-expect-error run is missing
defineWorkflow({ name: "x", version: 1 });
`,
  );
  await writeFile(
    path.join(project, "tsconfig.typed.json"),
    JSON.stringify({ extends: "./tsconfig.json", include: ["typed"] }),
  );
  const tsc = await run("npx", ["tsc", "--noEmit", "-p", "tsconfig.typed.json"], {
    cwd: project,
  });
  t.equal(tsc.code, 0, tsc.out);
  // And the imports run: the built JavaScript, under node_modules.
  const node = await run(
    "node",
    [
      "--input-type=module",
      "-e",
      'const a = await import("annal"); const b = await import("annal/testing"); console.log(typeof a.defineWorkflow, typeof b.workflowTest)',
    ],
    { cwd: project },
  );
  t.equal(node.out.trim(), "function function", node.out);
});

t.test("npm test passes in the new project", async (t) => {
  const tested = await run("npm", ["test"], { cwd: project });
  t.equal(tested.code, 0, tested.out);
  t.match(tested.out, /^annal test: 2 passed, 0 failed, 1 file/m);
});

t.test("every practice task fails as shipped and passes with its solution", async (t) => {
  // One Node.js process runs them all with the packed annal's own runExercise (what `annal
  // exercise` runs), so that the type-checks share one parse of the package's declarations;
  // the command itself then lists them as passed. Each run's tests get an embedded PostgreSQL,
  // as a user's do.
  const tasks = (await readdir(path.join(project, "exercises"), { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  t.ok(tasks.length >= 6, tasks.join(", "));
  const script = path.join(base, "run-tasks.mjs");
  await writeFile(
    script,
    `import { cp } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
const starter = path.resolve("node_modules/annal/dist/src/starter/index.js");
const { runExercise } = await import(pathToFileURL(starter).href);
const [solutions, ...tasks] = process.argv.slice(2);
for (const task of tasks) {
  for (const phase of ["shipped", "solved"]) {
    if (phase === "solved") {
      await cp(path.join(solutions, task), path.join("exercises", task), { recursive: true });
    }
    const out = [];
    let code = null;
    try {
      await runExercise({ cwd: process.cwd(), selector: task, out: (line) => out.push(line) });
    } catch (error) {
      code = error.code ?? String(error);
    }
    console.log(JSON.stringify({ task, phase, code, out }));
  }
}
`,
  );
  const ran = await run(
    "node",
    [script, path.join(ROOT, "test", "starter", "solutions"), ...tasks],
    {
      cwd: project,
    },
  );
  t.equal(ran.code, 0, ran.out);
  const runs = ran.out
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map(
      (line) =>
        JSON.parse(line) as { task: string; phase: string; code: string | null; out: string[] },
    );
  for (const [index, task] of tasks.entries()) {
    const shipped = runs.find((r) => r.task === task && r.phase === "shipped");
    const solved = runs.find((r) => r.task === task && r.phase === "solved");
    const said = (r: typeof shipped) => r?.out.join("\n") ?? ran.out;
    t.equal(shipped?.code, "ANNAL_EXERCISE_FAILED", `${task} fails as shipped: ${said(shipped)}`);
    t.ok(
      shipped?.out.some((line) => line.startsWith("type-check: ok")),
      `${task} as shipped type-checks`,
    );
    t.equal(solved?.code, null, `${task} passes with its solution: ${said(solved)}`);
    t.match(said(solved), `task ${index + 1} passes`);
  }
  const listed = await run("npx", ["annal", "exercise", "--list"], { cwd: project });
  t.equal(listed.code, 0, listed.out);
  t.equal(listed.out.match(/ passes$/gm)?.length, tasks.length, listed.out);
});

t.test("npx annal start serves the project; a scenario drives its joiner, --as", async (t) => {
  // Free ports for annal, the demo directory and the demo OpenID provider, so that the test
  // runs beside others.
  const [port, ldap, oidc] = [await freePort(), await freePort(), await freePort()];
  const tomlPath = path.join(project, "annal.toml");
  await writeFile(
    tomlPath,
    (await readFile(tomlPath, "utf8"))
      .replaceAll("3890", String(ldap))
      .replaceAll("4174", String(oidc)),
  );
  const child: ChildProcess = spawn("npx", ["annal", "start"], {
    cwd: project,
    env: userEnv({ PORT: String(port) }),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group: npx, npm and annal stop together
  });
  let log = "";
  child.stdout!.on("data", (chunk: Buffer) => (log += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString()));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid!, "SIGTERM");
      await exited(child);
    }
    // npx may end before annal has stopped its PostgreSQL, which writes until it is down.
    const postmaster = path.join(project, ".annal", "postgres", "postmaster.pid");
    await eventually(() => !existsSync(postmaster), {
      timeout: 60_000,
      what: "the project's embedded PostgreSQL has stopped",
    });
  });
  const ready = await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`annal exited: ${log}`);
      const response = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      return response?.ok ? ((await response.json()) as { status: string }) : undefined;
    },
    { timeout: 120_000, interval: 250, what: "annal's /readyz answers 200" },
  );
  t.equal(ready.status, "ready");
  t.match(log, /deployed workflow welcome@1/);
  t.match(log, /deployed workflow joiner@1/, "the demo's workflows, copied by init");

  // The README's scenarios, in the project: HR's hire starts the project's own joiner (its
  // hooks/hr.ts), and IT's answer to the laptop ticket completes it, seen as prossi, signed in
  // through the sign-in page and the demo OpenID provider.
  const env = { PORT: String(port) };
  const hire = await run("npx", ["annal", "refresh", "hire"], { cwd: project, env });
  t.equal(hire.code, 0, hire.out);
  const joiner =
    /^hire alovelace: hr\/refresh-hire-alovelace-\d+ processed: joiner (\S+) \(started\)$/m.exec(
      hire.out,
    )?.[1];
  t.ok(joiner, hire.out);
  const done = await run("npx", ["annal", "refresh", "ticket-done", "--as", "prossi"], {
    cwd: project,
    env,
  });
  t.equal(done.code, 0, done.out);
  t.match(
    done.out,
    new RegExp(
      `^ticket-done alovelace: tickets/refresh-ticket-done-alovelace-\\d+ processed: instance ${joiner} \\(answered\\)\\n  as prossi: joiner ${joiner} (RUNNING|COMPLETED)$`,
      "m",
    ),
  );
});
