/**
 * `annal exercise` in a project from `annal init` whose `annal` is this checkout (linked, as in
 * test-command.test.ts): every practice task fails as shipped and passes with its solution
 * (test/starter/solutions/<task>/, copied over the task's file), and the command's refusals
 * have their codes. The tasks run one after another, each on the suite's PostgreSQL.
 *
 * The tasks run in this process (runExercise, what the command runs), so that their
 * type-checks share one parse of annal and its dependencies (src/starter/typecheck.ts): a
 * command of its own per run parsed some 1,300 files each time, most of this file's time on a
 * loaded machine. The command itself runs for its refusals and its listing.
 */
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { isAnnalError, type AnnalError } from "../../src/errors/index.ts";
import { initProject, runExercise } from "../../src/starter/index.ts";
import { runAnnal } from "../cli/support.ts";

// Twelve runs of a task's tests, each in processes of its own: past 15 minutes on a machine loaded
// beyond 25 (the type-checks share one parse now; the tests themselves are the rest).
t.setTimeout(1_800_000);

const ROOT = path.resolve(import.meta.dirname, "../..");
const SOLUTIONS = path.join(import.meta.dirname, "solutions");
// The suite's PostgreSQL: each test of a task makes its database there.
const env = { DATABASE_URL: process.env.ANNAL_TEST_POSTGRES_URL ?? "" };

/** `annal exercise [selector]` run in this process: what it printed, and how it failed. */
async function exercise(selector: string): Promise<{ out: string; error?: AnnalError }> {
  const lines: string[] = [];
  try {
    await runExercise({
      cwd: project,
      selector,
      out: (line) => lines.push(line),
      env: { ...process.env, ...env },
    });
    return { out: lines.join("\n") };
  } catch (error) {
    if (!isAnnalError(error)) throw error;
    return { out: lines.join("\n"), error };
  }
}

async function linkedProject(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const base = await mkdtemp(path.join(tmpdir(), "annal-exercise-"));
  t.teardown(() => rm(base, { recursive: true, force: true }));
  const dir = path.join(base, "project");
  await initProject({ dir });
  await mkdir(path.join(dir, "node_modules"));
  await symlink(ROOT, path.join(dir, "node_modules", "annal"));
  // What the project's package.json installs: zod, and TypeScript for the type-check.
  for (const name of ["zod", "typescript", "@types"]) {
    await symlink(path.join(ROOT, "node_modules", name), path.join(dir, "node_modules", name));
  }
  return dir;
}

const project = await linkedProject(t);
const tasks = (await readdir(path.join(project, "exercises"), { withFileTypes: true }))
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

t.test("the starter has six tasks or more, in order, each with its solution here", async (t) => {
  t.ok(tasks.length >= 6, tasks.join(", "));
  t.same(
    tasks.map((task) => Number(task.split("-")[0])),
    tasks.map((_, index) => index + 1),
  );
  t.same((await readdir(SOLUTIONS)).sort(), tasks, "a solution for every task");
  const listed = await readFile(path.join(project, "exercises", "README.md"), "utf8");
  for (const task of tasks) t.match(listed, `\`${task}\``, `exercises/README.md lists ${task}`);
});

t.test("a task that does not type-check names the file and line, and runs no test", async (t) => {
  const file = path.join(project, "exercises", tasks[0]!, "workflow.ts");
  const shipped = await readFile(file, "utf8");
  t.teardown(() => writeFile(file, shipped));
  const lines = shipped.split("\n");
  const at = lines.findIndex((line) => line.includes("return {")) + 1;
  await writeFile(file, shipped.replace("return {", "const wrong: number = 'a';\n    return {"));
  const run = await exercise("1");
  t.equal(run.error?.code, "ANNAL_EXERCISE_TYPE_ERROR", run.out);
  t.match(
    run.error?.message,
    new RegExp(
      `^task 1 \\(first-step\\) does not type-check, so its tests do not run: exercises/${tasks[0]}/workflow\\.ts:${at}:\\d+ TS2322: `,
    ),
  );
  t.match(run.out, new RegExp(`^exercises/${tasks[0]}/workflow\\.ts:${at}:\\d+ TS2322: `, "m"));
  t.notMatch(run.out, /^(not )?ok /m, "no test ran");
});

for (const [index, task] of tasks.entries()) {
  const number = index + 1;
  t.test(`task ${number} (${task}) fails as shipped and passes with its solution`, async (t) => {
    const before = await exercise(String(number));
    t.equal(before.error?.code, "ANNAL_EXERCISE_FAILED", before.out);
    t.match(before.out, "type-check: ok", "the shipped file compiles");
    t.match(before.out, /^not ok /m);
    t.match(before.error?.message, `task ${number} `);
    t.match(before.error?.hint, `exercises/${task}/README.md says what to do`);

    await cp(path.join(SOLUTIONS, task), path.join(project, "exercises", task), {
      recursive: true,
    });
    const after = await exercise(task.replace(/^\d+-/, ""));
    t.notOk(after.error, after.out);
    t.match(after.out, new RegExp(`^annal exercise ${number}: \\d+ passed, 0 failed`, "m"));
    t.match(after.out, `task ${number} passes`);
    t.notMatch(after.out, /^not ok /m);
  });
}

t.test("without a task, annal exercise says every task passes once they do", async (t) => {
  const listed = await runAnnal(["exercise", "--list"], { cwd: project, env });
  t.equal(listed.code, 0, listed.stderr);
  t.equal(listed.stdout.match(/ passes$/gm)?.length, tasks.length, listed.stdout);
  const run = await runAnnal(["exercise"], { cwd: project, env });
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, `annal exercise: all ${tasks.length} tasks pass`);

  // A task changed since it passed is the first not passing again.
  const file = path.join(project, "exercises", tasks[1]!, "workflow.ts");
  await writeFile(file, `${await readFile(file, "utf8")}// changed\n`);
  const again = await runAnnal(["exercise", "--list"], { cwd: project, env });
  t.match(again.stdout, new RegExp(`^ 2  ${tasks[1]!.replace(/^\d+-/, "")} +to do$`, "m"));
});

t.test("annal exercise refuses what it cannot run, each with its code", async (t) => {
  const unknown = await runAnnal(["exercise", "99"], { cwd: project, env });
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /^annal: ANNAL_EXERCISE_UNKNOWN: no practice task "99"$/m);
  t.match(unknown.stderr, /^annal: hint: the tasks: 1 \(first-step\), 2 \(/m);

  const two = await runAnnal(["exercise", "1", "2"], { cwd: project, env });
  t.match(
    two.stderr,
    /^annal: ANNAL_EXERCISE_ARGUMENT: one task at a time; unexpected argument "2"$/m,
  );
  const option = await runAnnal(["exercise", "--fast"], { cwd: project, env });
  t.match(option.stderr, /^annal: ANNAL_EXERCISE_ARGUMENT: unknown option --fast$/m);

  const elsewhere = await mkdtemp(path.join(tmpdir(), "annal-no-exercises-"));
  t.teardown(() => rm(elsewhere, { recursive: true, force: true }));
  const missing = await runAnnal(["exercise"], { cwd: elsewhere, env });
  t.equal(missing.code, 1);
  t.match(missing.stderr, /^annal: ANNAL_EXERCISE_MISSING: there is no exercises\/ directory in /m);

  await mkdir(path.join(elsewhere, "exercises", "01-broken"), { recursive: true });
  await writeFile(path.join(elsewhere, "exercises", "01-broken", "workflow.test.ts"), "\n");
  const reference = await runAnnal(["exercise", "1"], { cwd: elsewhere, env });
  t.match(
    reference.stderr,
    /^annal: ANNAL_EXERCISE_REFERENCE: practice task 01-broken has no README\.md in exercises\/01-broken$/m,
  );
});
