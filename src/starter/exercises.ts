import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { AnnalError } from "../errors/index.ts";

/** Where `ExerciseProgress` keeps which tasks passed, relative to the project. */
export const PROGRESS_FILE = path.join("exercises", "progress.json");

/** A progress file's records; undefined when there is none or it does not read. */
async function readProgress(file: string): Promise<Record<string, string> | undefined> {
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, string>)
      : undefined;
  } catch {
    return undefined; // none yet, or unreadable: nothing counts as passed
  }
}

/** A task's folder: its number, a dash, its name (`03-request-answer`). */
const TASK_FOLDER = /^(\d{1,3})-([a-z0-9][a-z0-9-]*)$/;
const TEST_FILE = /\.test\.[cm]?ts$/;
const SOURCE_FILE = /\.[cm]?ts$/;

/** One practice task of a project's `exercises/`. */
export interface Exercise {
  readonly number: number;
  /** Its name without the number: `request-answer`. */
  readonly name: string;
  /** Its folder, relative to the project: `exercises/03-request-answer`. */
  readonly dir: string;
  /** Its TypeScript files (the one to complete and its tests), relative to the project. */
  readonly sources: readonly string[];
  /** Its test files, relative to the project. */
  readonly tests: readonly string[];
}

/**
 * The practice tasks under `<cwd>/exercises/`, in their order: every folder named
 * `<number>-<name>`, with its README.md, its TypeScript files and its tests.
 *
 * @throws AnnalError `ANNAL_EXERCISE_MISSING` when there is no such folder;
 *   `ANNAL_EXERCISE_REFERENCE` for a task without README.md or without a test file.
 */
export async function listExercises(cwd: string): Promise<Exercise[]> {
  const root = path.join(cwd, "exercises");
  const entries = await readdir(root, { withFileTypes: true }).catch(() => undefined);
  const folders = (entries ?? []).filter(
    (entry) => entry.isDirectory() && TASK_FOLDER.test(entry.name),
  );
  if (folders.length === 0) {
    throw new AnnalError(
      "ANNAL_EXERCISE_MISSING",
      entries === undefined
        ? `there is no exercises/ directory in ${cwd}`
        : `${root} holds no practice task (a folder such as 01-first-step)`,
    );
  }
  const exercises: Exercise[] = [];
  for (const folder of folders) {
    const [, number, name] = TASK_FOLDER.exec(folder.name)!;
    const dir = path.join("exercises", folder.name);
    const files = (await readdir(path.join(cwd, dir), { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(cwd, path.join(entry.parentPath, entry.name)))
      .sort();
    const sources = files.filter((file) => SOURCE_FILE.test(file) && !file.endsWith(".d.ts"));
    const tests = sources.filter((file) => TEST_FILE.test(file));
    if (!existsSync(path.join(cwd, dir, "README.md")) || tests.length === 0) {
      throw new AnnalError(
        "ANNAL_EXERCISE_REFERENCE",
        `practice task ${folder.name} has no ${tests.length === 0 ? "test file (*.test.ts)" : "README.md"} in ${dir}`,
      );
    }
    exercises.push({ number: Number(number), name: name!, dir, sources, tests });
  }
  return exercises.sort((a, b) => a.number - b.number || a.name.localeCompare(b.name));
}

/**
 * The task `selector` names: its number (`3`, `03`), its name (`request-answer`) or its
 * folder's name (`03-request-answer`).
 *
 * @throws AnnalError `ANNAL_EXERCISE_UNKNOWN`, listing the tasks.
 */
export function selectExercise(exercises: readonly Exercise[], selector: string): Exercise {
  const wanted = selector.trim().toLowerCase();
  const found = exercises.find((exercise) =>
    /^\d+$/.test(wanted)
      ? exercise.number === Number(wanted)
      : exercise.name === wanted || path.basename(exercise.dir) === wanted,
  );
  if (found) return found;
  throw new AnnalError("ANNAL_EXERCISE_UNKNOWN", `no practice task "${selector}"`, {
    hint: `the tasks: ${exercises.map((e) => `${e.number} (${e.name})`).join(", ")}`,
  });
}

/**
 * Which tasks passed, as the project's files are now: `annal exercise` records a task's
 * files' hash when its tests pass, so a task edited since counts as not passing again.
 *
 * Kept beside the tasks, in `exercises/progress.json`: it says something about the files in
 * `exercises/` and nothing about a database, so it lives with them, and a reset of annal's
 * data directory (`.annal/`: the embedded PostgreSQL, the demo directory) does not forget it.
 * Committed with the solutions, it still holds (a hash that matches the files as they are).
 * Progress an older annal kept in `.annal/exercises.json` is read when there is none yet.
 */
export class ExerciseProgress {
  readonly #file: string;
  readonly #formerFile: string;
  readonly #cwd: string;

  constructor(cwd: string) {
    this.#cwd = cwd;
    this.#file = path.join(cwd, PROGRESS_FILE);
    this.#formerFile = path.join(cwd, ".annal", "exercises.json");
  }

  async passed(exercise: Exercise): Promise<boolean> {
    const recorded = (await this.#read())[path.basename(exercise.dir)];
    return recorded !== undefined && recorded === (await this.#hash(exercise));
  }

  async recordPassed(exercise: Exercise): Promise<void> {
    const recorded = await this.#read();
    recorded[path.basename(exercise.dir)] = await this.#hash(exercise);
    await mkdir(path.dirname(this.#file), { recursive: true });
    await writeFile(this.#file, `${JSON.stringify(recorded, null, 2)}\n`);
  }

  async #read(): Promise<Record<string, string>> {
    return (await readProgress(this.#file)) ?? (await readProgress(this.#formerFile)) ?? {};
  }

  async #hash(exercise: Exercise): Promise<string> {
    const hash = createHash("sha256");
    for (const file of exercise.sources) {
      hash
        .update(`${file}\0`)
        .update(await readFile(path.join(this.#cwd, file)))
        .update("\0");
    }
    return hash.digest("hex");
  }
}
