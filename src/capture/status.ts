import type { Queryable } from "../db/index.ts";
import { isAnnalError } from "../errors/index.ts";
import { CAPTURE_SOURCES, captureFailures, captureLastSuccess } from "../metrics.ts";
import { CAPTURE_FAILURES_STREAM } from "../events/index.ts";
import type { CaptureSource } from "./service.ts";

/** Both ways: the metrics' `source` labels are capture's sources, and every one of them. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _labelsAreSources: Same<(typeof CAPTURE_SOURCES)[number], CaptureSource> = true;

/** Where capture stands, for `/readyz` and `/metrics`. */
export interface CaptureStatus {
  readonly source: CaptureSource;
  /** The source's checkpoint (the accesslog's last reqEnd, the changelog's change number, ad's `<invocationId>@<USN>`, poll's modifyTimestamp). */
  readonly checkpoint: string | null;
  readonly checkpointAt: Date | null;
  readonly lastPassAt: Date | null;
  readonly lastSuccessAt: Date | null;
  /** Seconds since the last pass that succeeded (null before the first). */
  readonly lagSeconds: number | null;
  /** Passes that failed in a row since the last that succeeded. */
  readonly consecutiveFailures: number;
  readonly lastError: { readonly code: string; readonly message: string; readonly at: Date } | null;
  /** Changes noted as `DirectoryChangeNotRecorded`, in all. */
  readonly changesNotRecorded: number;
}

/** Capture counts as failing once this many passes in a row have failed. */
export const FAILING_AFTER_PASSES = 3;

export async function recordPassSucceeded(db: Queryable, source: CaptureSource): Promise<void> {
  await db.query(
    `INSERT INTO capture_status (source, last_pass_at, last_success_at, consecutive_failures)
     VALUES ($1, now(), now(), 0)
     ON CONFLICT (source) DO UPDATE
       SET last_pass_at = now(), last_success_at = now(), consecutive_failures = 0`,
    [source],
  );
  captureLastSuccess.set({ source }, Date.now() / 1000);
}

/**
 * Notes a pass that failed as a whole (the directory unreachable, the database down). Its
 * error is kept by code and a message of our own or an `AnnalError`'s: other errors' messages
 * may quote values.
 */
export async function recordPassFailed(
  db: Queryable,
  source: CaptureSource,
  error: unknown,
): Promise<void> {
  const code = isAnnalError(error)
    ? error.code
    : typeof (error as { code?: unknown })?.code === "string"
      ? `ANNAL_CAPTURE_PASS_FAILED:${(error as { code: string }).code}`
      : "ANNAL_CAPTURE_PASS_FAILED";
  const message = isAnnalError(error)
    ? error.message
    : `the capture pass failed (${(error as Error)?.name ?? "error"})`;
  captureFailures.inc({ source });
  await db.query(
    `INSERT INTO capture_status (source, last_pass_at, consecutive_failures, last_error_code,
                                 last_error_message, last_error_at)
     VALUES ($1, now(), 1, $2, $3, now())
     ON CONFLICT (source) DO UPDATE
       SET last_pass_at = now(), consecutive_failures = capture_status.consecutive_failures + 1,
           last_error_code = $2, last_error_message = $3, last_error_at = now()`,
    [source, code, message],
  );
}

interface StatusRow {
  checkpoint: string | null;
  checkpoint_at: Date | null;
  last_pass_at: Date | null;
  last_success_at: Date | null;
  consecutive_failures: number | null;
  last_error_code: string | null;
  last_error_message: string | null;
  last_error_at: Date | null;
  not_recorded: number | null;
  lag_seconds: number | null;
}

export async function readCaptureStatus(
  db: Queryable,
  source: CaptureSource,
): Promise<CaptureStatus> {
  const result = await db.query<StatusRow>(
    `SELECT c.position AS checkpoint, c.updated_at AS checkpoint_at,
            s.last_pass_at, s.last_success_at, s.consecutive_failures,
            s.last_error_code, s.last_error_message, s.last_error_at,
            (SELECT version FROM streams WHERE stream_id = $2) AS not_recorded,
            extract(epoch FROM now() - s.last_success_at)::float8 AS lag_seconds
       FROM (SELECT $1::text AS source) AS q
       LEFT JOIN capture_checkpoints AS c ON c.source = q.source
       LEFT JOIN capture_status AS s ON s.source = q.source`,
    [source, CAPTURE_FAILURES_STREAM],
  );
  const row = result.rows[0]!;
  return {
    source,
    checkpoint: row.checkpoint,
    checkpointAt: row.checkpoint_at,
    lastPassAt: row.last_pass_at,
    lastSuccessAt: row.last_success_at,
    lagSeconds: row.lag_seconds === null ? null : Math.round(row.lag_seconds * 1000) / 1000,
    consecutiveFailures: row.consecutive_failures ?? 0,
    lastError:
      row.last_error_code && row.last_error_at
        ? {
            code: row.last_error_code,
            message: row.last_error_message ?? "",
            at: row.last_error_at,
          }
        : null,
    changesNotRecorded: row.not_recorded ?? 0,
  };
}
