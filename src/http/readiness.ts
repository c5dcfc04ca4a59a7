import { checkMigrations, MigrationMismatchError, type Queryable } from "../db/index.ts";
import { AnnalError, isAnnalError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { ProjectionStatus } from "../projector/index.ts";

/** The database did not answer `SELECT 1` (refused, failed, or too slow). */
export class DatabaseUnreachableError extends AnnalError {
  constructor(reason: string, cause?: unknown) {
    super("ANNAL_DATABASE_UNREACHABLE", `the database is unreachable: ${reason}`, {
      status: 503,
      hint: "check that PostgreSQL runs and that DATABASE_URL (or database.url) names it with the right user and password",
      cause,
    });
  }
}

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
  };
  readonly projections: readonly ProjectionReport[];
}

export interface ReadinessOptions {
  readonly pool: Queryable;
  /** The projections' status: the running projector's, or read from the database. */
  readonly projectorStatus: () => Promise<readonly ProjectionStatus[]>;
  /** Longest each check may take. */
  readonly timeoutMs: number;
  readonly log: Pick<Logger, "warn">;
}

/**
 * Ready means: the database answers, it carries every migration this program knows and
 * none it does not, and each projection's status can be read. A projection's lag is reported
 * but does not make the process unready: its tables still serve, only staler.
 *
 * Failures are reported by code with a fixed detail; the cause goes to the log, not to
 * whoever can reach the probe.
 */
export async function checkReadiness(options: ReadinessOptions): Promise<ReadinessReport> {
  const { pool, timeoutMs, log } = options;
  const skipped = { status: "skipped", detail: "the database is unreachable" } as const;

  const database = await check("database", log, () => pingDatabase(pool, timeoutMs));
  if (database.status !== "ok") {
    return report({ database, migrations: skipped, projections: skipped }, []);
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

  return report(
    {
      database,
      migrations: pending === undefined ? migrations : { ...migrations, pending },
      projections: projectionCheck,
    },
    projections.map((status) => ({
      name: status.name,
      version: status.version,
      builtVersion: status.builtVersion ?? null,
      position: status.position.position,
      lag: status.lag,
    })),
  );
}

function report(
  checks: ReadinessReport["checks"],
  projections: readonly ProjectionReport[],
): ReadinessReport {
  const ready = Object.values(checks).every((result) => result.status === "ok");
  return { status: ready ? "ready" : "unready", checks, projections };
}

const FAILURE_DETAILS: Readonly<Record<string, string>> = {
  ANNAL_DATABASE_UNREACHABLE: "the database did not answer SELECT 1",
  ANNAL_MIGRATIONS_PENDING:
    "the database lacks migrations this program needs; annal start applies them",
  WF_DATABASE_MIGRATION_MISMATCH: "the database records a migration this program does not know",
  ANNAL_READINESS_TIMEOUT: "the check did not finish in time",
};

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
    log.warn({ check: name, code, err: error, ...context }, `readiness check ${name} failed`);
    return { status: "failed", code, detail: FAILURE_DETAILS[code] ?? `the ${name} check failed` };
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
