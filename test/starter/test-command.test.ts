import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { describeFailure } from "../../src/starter/index.ts";
import { initProject } from "../../src/starter/index.ts";
import { runAnnal } from "../cli/support.ts";

t.setTimeout(300_000);

const ROOT = path.resolve(import.meta.dirname, "../..");

/**
 * A project from `annal init` whose `annal` is this checkout (a link, as `npm link` makes):
 * `annal/testing` runs from the sources, so this needs no pack (test/starter/pack.test.ts
 * covers the packed package).
 */
async function linkedProject(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const base = await mkdtemp(path.join(tmpdir(), "annal-test-command-"));
  t.teardown(() => rm(base, { recursive: true, force: true }));
  const dir = path.join(base, "project");
  await initProject({ dir });
  await mkdir(path.join(dir, "node_modules"));
  await symlink(ROOT, path.join(dir, "node_modules", "annal"));
  await symlink(path.join(ROOT, "node_modules", "zod"), path.join(dir, "node_modules", "zod"));
  return dir;
}

// The suite's PostgreSQL: annal test makes each test's database there.
const env = { DATABASE_URL: process.env.ANNAL_TEST_POSTGRES_URL ?? "" };

t.test("annal test runs the project's workflow tests and sums them up", async (t) => {
  const dir = await linkedProject(t);
  const run = await runAnnal(["test"], { cwd: dir, env });
  t.equal(run.code, 0, run.stdout + run.stderr);
  t.match(run.stdout, "ok tests/welcome.test.ts › the manager confirms the start date\n");
  t.match(run.stdout, /^annal test: 2 passed, 0 failed, 1 file \([\d.]+ s\)$/m);

  const glob = await runAnnal(["test", "tests/welcome*"], { cwd: dir, env });
  t.match(glob.stdout, /^annal test: 2 passed, 0 failed, 1 file/m, "a glob selects too");
});

t.test("a failing test names its WF_TEST_* code, and annal test exits 1", async (t) => {
  const dir = await linkedProject(t);
  await writeFile(
    path.join(dir, "tests", "late.test.ts"),
    `import { test } from "node:test";
import { workflowTest } from "annal/testing";
import welcome from "../workflows/welcome.ts";

test("the manager answers at once", async (t) => {
  const wt = await workflowTest({ workflows: [welcome] });
  t.after(() => wt.close());
  wt.fixture("mailer", { send: () => "sent" });
  const flow = await wt.start({ uid: "ada", manager: "maria" }, { as: "hr" });
  await flow.waitFor("COMPLETED", { timeout: 300 });
});
`,
  );
  const run = await runAnnal(["test", "late"], { cwd: dir, env });
  t.equal(run.code, 1, run.stdout + run.stderr);
  t.match(run.stdout, "not ok tests/late.test.ts › the manager answers at once\n");
  t.match(run.stdout, /^ {2}WF_TEST_WAIT_TIMEOUT: .*WAITING/m);
  t.match(run.stdout, /^annal test: 0 passed, 1 failed, 1 file/m);
  t.match(run.stderr, /^annal: ANNAL_TESTS_FAILED: 1 of 1 tests failed$/m);
});

t.test("a pattern that selects no test file is ANNAL_NO_TESTS_SELECTED", async (t) => {
  const dir = await linkedProject(t);
  const run = await runAnnal(["test", "no-such-workflow"], { cwd: dir, env });
  t.equal(run.code, 1);
  t.match(
    run.stderr,
    /^annal: ANNAL_NO_TESTS_SELECTED: no test file under .* matches "no-such-workflow" \(of 1\)$/m,
  );
  t.equal(run.stdout, "");
});

t.test("a failure is told by its code and first line", async (t) => {
  t.equal(
    describeFailure({ code: "ERR_TEST_FAILURE", cause: { code: "WF_TEST_X", message: "a\nb" } }),
    "WF_TEST_X: a",
  );
  t.equal(describeFailure(new Error("plain")), "plain");
});
