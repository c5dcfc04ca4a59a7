import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { ExerciseProgress, listExercises } from "../../src/starter/exercises.ts";

/** A project with one practice task, its file to complete and its test. */
async function project(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "annal-progress-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const task = path.join(dir, "exercises", "01-first-step");
  await mkdir(task, { recursive: true });
  await writeFile(path.join(task, "README.md"), "# First step\n");
  await writeFile(path.join(task, "greet.ts"), "export const greet = () => 'hi';\n");
  await writeFile(path.join(task, "greet.test.ts"), "import './greet.ts';\n");
  return dir;
}

t.test(
  "a task's pass is kept beside the tasks: resetting annal's data directory keeps it",
  async (t) => {
    const dir = await project(t);
    const [task] = await listExercises(dir);
    await new ExerciseProgress(dir).recordPassed(task!);
    t.match(
      JSON.parse(await readFile(path.join(dir, "exercises", "progress.json"), "utf8")),
      { "01-first-step": /^[0-9a-f]{64}$/ },
      "recorded in exercises/progress.json",
    );
    // A reset: the data directory (the embedded PostgreSQL, the demo directory) thrown away.
    await mkdir(path.join(dir, ".annal", "postgres"), { recursive: true });
    await rm(path.join(dir, ".annal"), { recursive: true, force: true });
    t.ok(await new ExerciseProgress(dir).passed(task!), "still passed after the reset");
    t.same(
      (await listExercises(dir)).map((each) => each.dir),
      [path.join("exercises", "01-first-step")],
      "the file is no task",
    );

    await writeFile(path.join(dir, "exercises", "01-first-step", "greet.ts"), "export {};\n");
    t.notOk(await new ExerciseProgress(dir).passed(task!), "a task edited since is to do again");
  },
);

t.test("progress an older annal kept in .annal/exercises.json still counts", async (t) => {
  const dir = await project(t);
  const [task] = await listExercises(dir);
  await new ExerciseProgress(dir).recordPassed(task!);
  const recorded = await readFile(path.join(dir, "exercises", "progress.json"), "utf8");
  await rm(path.join(dir, "exercises", "progress.json"));
  await mkdir(path.join(dir, ".annal"));
  await writeFile(path.join(dir, ".annal", "exercises.json"), recorded);
  t.ok(await new ExerciseProgress(dir).passed(task!));
});
