import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { PACKAGE_ROOT } from "../package-root.ts";
import type { Pool, Queryable } from "../db/index.ts";
import type { Logger } from "../logger.ts";

/** How often a process refreshes its row. */
export const HEARTBEAT_MS = 10_000;
/** A row not refreshed for this long belongs to a process that is gone (died, lost the database). */
export const GONE_AFTER_MS = 3 * HEARTBEAT_MS;
/** A gone row is deleted by the others' heartbeats after this long: status shows it meanwhile. */
export const PRUNE_AFTER_MS = 60 * 60_000;

/** One annal process attached to the database, as its row says. */
export interface ProcessRow {
  readonly id: string;
  readonly parts: readonly string[];
  readonly host: string;
  readonly pid: number;
  readonly version: string;
  readonly url: string | null;
  readonly startedAt: Date;
  readonly lastSeenAt: Date;
  /** Not seen for longer than `GONE_AFTER_MS`: killed, or cut off from the database. */
  readonly gone: boolean;
}

export interface RegisteredProcess {
  readonly id: string;
  /** The URL the HTTP server listens on, once it does. */
  publishUrl(url: string): Promise<void>;
  /** Stops the heartbeat and deletes the row (a clean shutdown). Idempotent. */
  stop(): Promise<void>;
}

/** annal's version, from its package.json. */
export function annalVersion(): string {
  const file = path.join(PACKAGE_ROOT, "package.json");
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}

/**
 * Registers this process in `annal_processes` and keeps its row fresh every `HEARTBEAT_MS`
 * (on a timer that does not keep the process alive). A heartbeat that fails (the database
 * restarting) is logged and the next tries again; one that finds its row pruned meanwhile
 * puts it back. Each heartbeat also deletes rows gone for longer than `PRUNE_AFTER_MS`, so
 * killed processes do not pile up while `status` still shows a recent death.
 */
export async function registerProcess(options: {
  readonly pool: Pool;
  readonly parts: readonly string[];
  readonly log: Pick<Logger, "warn">;
  readonly heartbeatMs?: number;
}): Promise<RegisteredProcess> {
  const { pool, parts, log } = options;
  const id = randomUUID();
  const version = annalVersion();
  let url: string | null = null;
  const upsert = (db: Queryable) =>
    db.query(
      `INSERT INTO annal_processes (id, parts, host, pid, version, url)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET last_seen_at = now(), url = EXCLUDED.url`,
      [id, parts, hostname(), process.pid, version, url],
    );
  await upsert(pool);
  let beating: Promise<void> | undefined;
  const beat = async () => {
    try {
      await upsert(pool);
      await pool.query(
        `DELETE FROM annal_processes WHERE last_seen_at < now() - make_interval(secs => $1)`,
        [PRUNE_AFTER_MS / 1000],
      );
    } catch (error) {
      log.warn({ err: error }, "could not refresh this process's heartbeat; trying again");
    }
  };
  const timer = setInterval(() => {
    beating ??= beat().finally(() => (beating = undefined));
  }, options.heartbeatMs ?? HEARTBEAT_MS);
  timer.unref();
  let stopped: Promise<void> | undefined;
  return {
    id,
    publishUrl: async (published) => {
      url = published;
      await upsert(pool);
    },
    stop() {
      stopped ??= (async () => {
        clearInterval(timer);
        await beating;
        await pool.query("DELETE FROM annal_processes WHERE id = $1", [id]);
      })();
      return stopped;
    },
  };
}

interface Row {
  id: string;
  parts: string[];
  host: string;
  pid: number;
  version: string;
  url: string | null;
  started_at: Date;
  last_seen_at: Date;
  gone: boolean;
}

/** Every registered process, the oldest first; `gone` by the database's clock. */
export async function listProcesses(db: Queryable): Promise<ProcessRow[]> {
  const { rows } = await db.query<Row>(
    `SELECT id, parts, host, pid, version, url, started_at, last_seen_at,
            last_seen_at < now() - make_interval(secs => $1) AS gone
       FROM annal_processes ORDER BY started_at, id`,
    [GONE_AFTER_MS / 1000],
  );
  return rows.map((row) => ({
    id: row.id,
    parts: row.parts,
    host: row.host,
    pid: row.pid,
    version: row.version,
    url: row.url,
    startedAt: row.started_at,
    lastSeenAt: row.last_seen_at,
    gone: row.gone,
  }));
}
