import { accessAt } from "../auth/index.ts";
import {
  CAPTURE_LOCK_APPLICATION,
  readCaptureStatus,
  type CaptureSource,
  type CaptureStatus,
} from "../capture/index.ts";
import type { Queryable, Pool } from "../db/index.ts";
import { JOBS_SCHEMA } from "../jobs/index.ts";
import { projectionStatus, type AnyProjection, type ProjectionStatus } from "../projector/index.ts";
import { FAILED_WORK } from "../../projections/failed-work/index.ts";
import { listProcesses, type ProcessRow } from "./registry.ts";

/** What `annal status` reports: read from the database, never guessed. */
export interface AnnalStatus {
  readonly processes: readonly ProcessRow[];
  readonly projections: readonly ProjectionStatus[];
  readonly capture: {
    /** The process holding capture's lock (`pid@host` as its connection names it), or null. */
    readonly holder: {
      readonly pid: number;
      readonly host: string;
      readonly processId: string | null;
    } | null;
    readonly status: CaptureStatus | null;
  };
  /** pg-boss's queues with work waiting or running. */
  readonly queues: readonly QueueDepth[];
  /** Change events whose processing failed for good and still needs attention. */
  readonly failedWork: number;
  readonly access: {
    readonly version: number;
    readonly activatedBy: string;
    readonly activatedAt: Date;
  } | null;
}

export interface QueueDepth {
  readonly name: string;
  readonly queued: number;
  readonly active: number;
  readonly retrying: number;
}

/**
 * Everything `annal status` shows, each part read from where annal keeps it: the process
 * registry, the projections' checkpoints, capture's leadership lock (a session advisory lock:
 * PostgreSQL says who holds it) and status row, pg-boss's job table, the failed work
 * projection and the access projection's active configuration.
 */
export async function readStatus(
  pool: Pool,
  options: {
    readonly projections: readonly AnyProjection[];
    readonly captureSource?: CaptureSource;
  },
): Promise<AnnalStatus> {
  const processes = await listProcesses(pool);
  const [projections, holder, captureStatus, queues, failedWork, report] = await Promise.all([
    projectionStatus(pool, options.projections),
    captureHolder(pool),
    options.captureSource === undefined ? null : readCaptureStatus(pool, options.captureSource),
    queueDepths(pool),
    whenBuilt(countFailedWork(pool), 0),
    whenBuilt(accessAt(pool), { configuration: null }),
  ]);
  const configuration = report.configuration;
  return {
    processes,
    projections,
    capture: {
      holder:
        holder === null
          ? null
          : {
              ...holder,
              processId:
                processes.find((p) => p.pid === holder.pid && p.host.startsWith(holder.host))?.id ??
                null,
            },
      status: captureStatus,
    },
    queues,
    failedWork,
    access:
      configuration === null
        ? null
        : {
            version: configuration.version,
            activatedBy: configuration.activatedBy,
            activatedAt: configuration.activatedAt,
          },
  };
}

/**
 * Who holds capture's lock: the backend holding it, and the `pid@host` its connection's
 * application name carries (set by the capture worker). The host may be cut short: PostgreSQL
 * keeps 63 bytes of a name.
 */
async function captureHolder(db: Queryable): Promise<{ pid: number; host: string } | null> {
  const { rows } = await db.query<{ application_name: string }>(
    `SELECT a.application_name
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.database = (
              SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.objid = hashtext('annal:capture')::oid AND l.objsubid = 1`,
  );
  const name = rows[0]?.application_name;
  if (name === undefined) return null;
  const match = new RegExp(`^${CAPTURE_LOCK_APPLICATION}:(\\d+)@(.*)$`).exec(name);
  return match ? { pid: Number(match[1]), host: match[2]! } : { pid: 0, host: "unknown" };
}

async function queueDepths(db: Queryable): Promise<QueueDepth[]> {
  const exists = await db.query<{ found: boolean }>("SELECT to_regclass($1) IS NOT NULL AS found", [
    `${JOBS_SCHEMA}.job`,
  ]);
  if (!exists.rows[0]?.found) return [];
  const { rows } = await db.query<{
    name: string;
    queued: number;
    active: number;
    retrying: number;
  }>(
    `SELECT name,
            count(*) FILTER (WHERE state = 'created')::int AS queued,
            count(*) FILTER (WHERE state = 'active')::int AS active,
            count(*) FILTER (WHERE state = 'retry')::int AS retrying
       FROM ${JOBS_SCHEMA}.job
      WHERE state IN ('created', 'active', 'retry')
      GROUP BY name ORDER BY name`,
  );
  return rows;
}

/**
 * A projection's read, or `fallback` while its tables do not exist yet (no projector has run
 * on this database): status answers on a database no annal has started on.
 */
async function whenBuilt<T, F>(read: Promise<T>, fallback: F): Promise<T | F> {
  try {
    return await read;
  } catch (error) {
    if ((error as { code?: unknown }).code === "42P01") return fallback;
    throw error;
  }
}

async function countFailedWork(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM ${FAILED_WORK} WHERE state IN ('failed', 'retrying')`,
  );
  return rows[0]?.count ?? 0;
}
