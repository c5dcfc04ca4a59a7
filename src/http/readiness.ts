import {
  checkMigrations,
  DatabaseUnreachableError,
  MigrationMismatchError,
  type Queryable,
} from "../db/index.ts";

export { DatabaseUnreachableError };
import { AnnalError, catalogEntry, isAnnalError } from "../errors/index.ts";
import type { Logger } from "../logger.ts";
import { FAILING_AFTER_PASSES, type CaptureStatus } from "../capture/index.ts";
import type { ProjectionStatus } from "../projector/index.ts";
import { holdsDirectory } from "../history/index.ts";

/** Runs `SELECT 1`, failing with `DatabaseUnreachableError` after `timeoutMs`. */
export async function pingDatabase(db: Queryable, timeoutMs: number): Promise<void> {
  try {
    // The query is not cancelled on timeout: a pool connection still being opened finishes
    // or fails on its own, and a probe must not wait for it.
    await withTimeout(
      db.query("SELECT 1"),
      timeoutMs,
      () => new DatabaseUnreachableError(`no answer within ${timeoutMs} ms`),
    );
  } catch (error) {
    if (error instanceof DatabaseUnreachableError) throw error;
    throw new DatabaseUnreachableError((error as Error).message || String(error), error);
  }
}

export type CheckResult =
  | { readonly status: "ok" }
  | { readonly status: "failed"; readonly code: string; readonly detail: string }
  | { readonly status: "skipped"; readonly detail: string };

export interface ProjectionReport {
  readonly name: string;
  readonly version: number;
  readonly builtVersion: number | null;
  /** The global position of the last event applied. */
  readonly position: number;
  readonly lag: number;
}

/** The body of `GET /readyz`. */
export interface ReadinessReport {
  readonly status: "ready" | "unready";
  readonly checks: {
    readonly database: CheckResult;
    readonly migrations: CheckResult & { readonly pending?: number };
    readonly projections: CheckResult;
    readonly capture: CheckResult;
  };
  readonly projections: readonly ProjectionReport[];
  /** Change capture's state; null where annal has no directory. */
  readonly capture: CaptureStatus | null;
}

export interface ReadinessOptions {
  readonly pool: Queryable;
  /** The projections' status: the running projector's, or read from the database. */
  readonly projectorStatus: () => Promise<readonly ProjectionStatus[]>;
  /** Change capture's state, where annal has a directory. */
  readonly captureStatus?: () => Promise<CaptureStatus>;
  /** Why the configured directory could not be used at start: capture is not capturing. */
  readonly directoryFailure?: unknown;
  /** Longest each check may take. */
  readonly timeoutMs: number;
  readonly log: Pick<Logger, "warn">;
}

/**
 * Ready means: the database answers, it carries every migration this program knows and
 * none it does not, each projection's status can be read, and change capture is not failing
 * (its last `FAILING_AFTER_PASSES` passes did not all fail). A projection's lag and capture's
 * lag are reported but do not make the process unready: its tables still serve, only
 * staler; a capture that fails pass after pass records nothing new at all.
 *
 * Failures are reported by code with a fixed detail; the cause goes to the log, not to
 * whoever can reach the probe.
 */
export async function checkReadiness(options: ReadinessOptions): Promise<ReadinessReport> {
  const { pool, timeoutMs, log } = options;
  const skipped = { status: "skipped", detail: "the database is unreachable" } as const;

  const database = await check("database", log, () => pingDatabase(pool, timeoutMs));
  if (database.status !== "ok") {
    return report(
      { database, migrations: skipped, projections: skipped, capture: skipped },
      [],
      null,
    );
  }

  let pending: number | undefined;
  const migrations = await check("migrations", log, async () => {
    pending = (await withTimeout(checkMigrations(pool), timeoutMs, timedOut("migrations"))).pending;
    if (pending > 0) {
      throw new AnnalError("ANNAL_MIGRATIONS_PENDING", `${pending} migration(s) not applied yet`);
    }
  });

  let projections: readonly ProjectionStatus[] = [];
  const projectionCheck = await check("projections", log, async () => {
    projections = await withTimeout(
      options.projectorStatus(),
      timeoutMs,
      timedOut("projection status"),
    );
  });

  let capture: CaptureStatus | null = null;
  const captureCheck: CheckResult = options.captureStatus
    ? await check("capture", log, async () => {
        capture = await withTimeout(options.captureStatus!(), timeoutMs, timedOut("capture"));
        if (options.directoryFailure !== undefined)
          throw directoryUnusable(options.directoryFailure);
        const refusal = CAPTURE_REFUSALS.find((code) => code === capture?.lastError?.code);
        if (capture.consecutiveFailures > 0 && refusal) {
          throw new AnnalError(refusal, capture.lastError!.message);
        }
        if (capture.consecutiveFailures >= FAILING_AFTER_PASSES) {
          throw new AnnalError(
            "ANNAL_CAPTURE_FAILING",
            `the last ${capture.consecutiveFailures} capture passes failed`,
          );
        }
        // Before its first import is recorded capture captures nothing, and a search of the
        // projections answers an empty page for a directory full of entries.
        if (capture.checkpoint === null) {
          throw new AnnalError(
            "ANNAL_HISTORY_BUILDING",
            "capture's first import of the directory is under way",
          );
        }
        // Recorded, it is not yet what a search reads until the entries' projection has it:
        // ready means a search answers (REST refuses one before, ANNAL_HISTORY_BUILDING too).
        if (!(await holdsDirectory(options.pool, "entries"))) {
          throw new AnnalError(
            "ANNAL_HISTORY_BUILDING",
            "the projections are applying capture's first import of the directory",
          );
        }
      })
    : { status: "skipped", detail: "annal has no directory" };

  return report(
    {
      database,
      migrations: pending === undefined ? migrations : { ...migrations, pending },
      projections: projectionCheck,
      capture: captureCheck,
    },
    projections.map((status) => ({
      name: status.name,
      version: status.version,
      builtVersion: status.builtVersion ?? null,
      position: status.position.position,
      lag: status.lag,
    })),
    capture,
  );
}

/**
 * The directory failed at start (its schema unreadable, TLS refused, the server down) and annal
 * runs without it, so nothing is captured however long the process runs: the failure's own
 * code where it has one.
 */
function directoryUnusable(failure: unknown): Error {
  if (isAnnalError(failure)) return failure;
  return new AnnalError(
    "ANNAL_LDAP_UNAVAILABLE",
    "the directory could not be used when annal started; annal runs without it",
  );
}

/**
 * Why capture cannot capture at all, rather than a pass that failed: `/readyz` names these at
 * the first failed pass, with their own code, and never says ready while one stands.
 */
const CAPTURE_REFUSALS = [
  "ANNAL_DIRECTORY_BASE_MISSING",
  "ANNAL_DIRECTORY_BASE_EMPTY",
  "ANNAL_CAPTURE_SOURCE_MISSING",
  "ANNAL_IMPORT_STORED_NOTHING",
] as const;

function report(
  checks: ReadinessReport["checks"],
  projections: readonly ProjectionReport[],
  capture: CaptureStatus | null,
): ReadinessReport {
  const ready = Object.values(checks).every(
    (result) =>
      result.status === "ok" || (result === checks.capture && result.status === "skipped"),
  );
  return { status: ready ? "ready" : "unready", checks, projections, capture };
}

/** Unready for a while by design, not by a failure: the start's own log says why. */
const EXPECTED: ReadonlySet<string> = new Set(["ANNAL_HISTORY_BUILDING"]);

async function check(
  name: string,
  log: Pick<Logger, "warn">,
  run: () => Promise<void>,
): Promise<CheckResult> {
  try {
    await run();
    return { status: "ok" };
  } catch (error) {
    const code = isAnnalError(error) ? error.code : "ANNAL_INTERNAL";
    const context =
      error instanceof MigrationMismatchError
        ? { recordedKey: error.recordedKey, newestKnownKey: error.newestKnownKey }
        : {};
    if (!EXPECTED.has(code)) {
      log.warn({ check: name, code, err: error, ...context }, `readiness check ${name} failed`);
    }
    return {
      status: "failed",
      code,
      detail: catalogEntry(code)?.meaning ?? `the ${name} check failed`,
    };
  }
}

function timedOut(what: string): (timeoutMs: number) => AnnalError {
  return (timeoutMs) =>
    new AnnalError("ANNAL_READINESS_TIMEOUT", `${what}: no answer within ${timeoutMs} ms`);
}

async function withTimeout<T>(
  work: Promise<T>,
  timeoutMs: number,
  onTimeout: (timeoutMs: number) => Error,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout(timeoutMs)), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
