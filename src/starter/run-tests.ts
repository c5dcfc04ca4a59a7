import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { run } from "node:test";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";

/** What a project's test files are called: `tests/**\/*.test.ts` (or `.js`, `.mts`). */
const TEST_FILE = /\.test\.(?:[cm]?ts|[cm]?js)$/;

export interface RunTestsOptions {
  /** The project's directory (its `tests/` is searched). */
  readonly cwd: string;
  /** Selects files whose path under the project contains it, or matches it as a glob. */
  readonly pattern?: string;
  /** Runs these files (relative to `cwd`) instead of selecting them under `tests/`. */
  readonly files?: readonly string[];
  /** What the summary line starts with; default `annal test`. */
  readonly label?: string;
  readonly out: (line: string) => void;
  readonly env?: NodeJS.ProcessEnv;
}

/** What a run found: counts of leaf tests, and the files it ran. */
export interface TestSummary {
  readonly files: number;
  readonly passed: number;
  readonly failed: number;
}

/**
 * The test files of the project: every `*.test.ts` under `tests/`, relative to `cwd`,
 * narrowed by `pattern` (a part of the path, or a glob such as `tests/**\/welcome*`).
 *
 * @throws AnnalError `ANNAL_NO_TESTS_SELECTED` when none is left.
 */
export async function selectTestFiles(cwd: string, pattern?: string): Promise<string[]> {
  const dir = path.join(cwd, "tests");
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  const all = entries
    .filter((entry) => entry.isFile() && TEST_FILE.test(entry.name))
    .map((entry) => path.relative(cwd, path.join(entry.parentPath, entry.name)))
    .sort();
  const selected =
    pattern === undefined
      ? all
      : all.filter((file) =>
          /[*?[{]/.test(pattern) ? path.matchesGlob(file, pattern) : file.includes(pattern),
        );
  if (selected.length === 0) {
    throw new AnnalError(
      "ANNAL_NO_TESTS_SELECTED",
      pattern === undefined
        ? `no test file under ${dir} (tests/**/*.test.ts)`
        : `no test file under ${dir} matches "${pattern}" (of ${all.length})`,
    );
  }
  return selected;
}

/**
 * `annal test [pattern]`: runs the project's workflow tests with Node.js's test runner, one
 * process per file, on one PostgreSQL server for the run: `DATABASE_URL`'s, or an embedded one
 * started here (the driver, `annal/testing`, makes a database of each test's own on it and
 * moves that database's clock). Prints `ok` or `not ok` per test, a failure's code
 * (`WF_TEST_*`) and message, then a summary line.
 *
 * @throws AnnalError `ANNAL_NO_TESTS_SELECTED`; `ANNAL_TESTS_FAILED` when a test failed.
 */
export async function runProjectTests(options: RunTestsOptions): Promise<TestSummary> {
  const files = options.files ?? (await selectTestFiles(options.cwd, options.pattern));
  const env = options.env ?? process.env;
  const started = performance.now();
  let embedded: EmbeddedDatabase | undefined;
  let scratch: string | undefined;
  if (!env.DATABASE_URL) {
    scratch = await mkdtemp(path.join(os.tmpdir(), "annal-test-"));
    embedded = await startEmbeddedPostgres({ dataDir: path.join(scratch, "postgres") });
  }
  let passed = 0;
  let failed = 0;
  try {
    const stream = run({
      files: files.map((file) => path.join(options.cwd, file)),
      cwd: options.cwd,
      isolation: "process",
      concurrency: Math.max(1, Math.min(files.length, os.availableParallelism())),
      env: { ...env, DATABASE_URL: env.DATABASE_URL ?? embedded!.url },
    });
    for await (const event of stream) {
      if (event.type !== "test:pass" && event.type !== "test:fail") continue;
      const { data } = event;
      // Only tests: a file's own entry and a suite report their tests' outcome again.
      if (data.details.type === "suite" || isFileEntry(data.name, data.file)) continue;
      const where = data.file ? `${path.relative(options.cwd, data.file)} › ` : "";
      if (event.type === "test:pass") {
        passed++;
        options.out(`ok ${where}${data.name}`);
      } else {
        failed++;
        options.out(`not ok ${where}${data.name}`);
        options.out(`  ${describeFailure(event.data.details.error)}`);
      }
    }
  } finally {
    await embedded?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  options.out(
    `${options.label ?? "annal test"}: ${passed} passed, ${failed} failed, ${files.length} file${files.length === 1 ? "" : "s"} (${seconds} s)`,
  );
  if (failed > 0 || passed === 0) {
    throw new AnnalError(
      "ANNAL_TESTS_FAILED",
      passed === 0 && failed === 0
        ? "the selected files hold no test"
        : `${failed} of ${passed + failed} tests failed`,
    );
  }
  return { files: files.length, passed, failed };
}

/** The runner reports each file as a test of its own when the file itself fails to run. */
function isFileEntry(name: string, file: string | undefined): boolean {
  return file !== undefined && (name === file || path.resolve(name) === path.resolve(file));
}

/**
 * A failure as one line: the test's own error (the runner wraps it as its `cause`), with its
 * code first when it has one (`WF_TEST_WAIT_TIMEOUT: ...`).
 */
export function describeFailure(error: unknown): string {
  const wrapped = error as { cause?: unknown; code?: unknown; message?: unknown } | undefined;
  const inner = (
    wrapped?.code === "ERR_TEST_FAILURE" && wrapped.cause !== undefined ? wrapped.cause : wrapped
  ) as { code?: unknown; message?: unknown } | undefined;
  const message =
    typeof inner?.message === "string" ? inner.message.split("\n")[0]! : String(inner);
  return typeof inner?.code === "string" ? `${inner.code}: ${message}` : message;
}
