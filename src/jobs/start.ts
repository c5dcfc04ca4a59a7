import { createHash } from "node:crypto";
import type pg from "pg";
import { PgBoss, type ConstructorOptions, type Db, type Queue } from "pg-boss";
import { AnnalError } from "../errors/index.ts";
import {
  isDatabaseUnreachable,
  logLoopFailure,
  sideConnection,
  type Pool,
  type Queryable,
} from "../db/index.ts";
import type { Logger } from "../logger.ts";

/** Where annal's pg-boss keeps its tables, beside annal's own in the same database. */
export const JOBS_SCHEMA = "pgboss";

/**
 * Every queue of annal's has a heartbeat: a worker refreshes each job it runs every
 * `JOB_HEARTBEAT_SECONDS / 2` s, and a job whose heartbeat is older than this is failed (and
 * retried, or dead-lettered) by the supervisor of any live workers process. A SIGKILLed worker's
 * job is thus taken up again after at most `JOB_HEARTBEAT_SECONDS + JOB_MONITOR_INTERVAL_SECONDS`
 * (15 s) plus its queue's retry delay, instead of at its expiry (minutes): on a `key_strict_fifo`
 * queue every later job of its key waits for it. 10 s is pg-boss's least.
 */
export const JOB_HEARTBEAT_SECONDS = 10;

/** How often a supervising process looks for expired jobs and stale heartbeats (pg-boss: 60 s). */
export const JOB_MONITOR_INTERVAL_SECONDS = 5;

export interface StartJobsOptions {
  /** annal's pool: pg-boss runs its statements on it (no second pool, no URL needed). */
  readonly pool?: Pool;
  /** Or a connection URL, for a pool of pg-boss's own. One of the two is required. */
  readonly connectionString?: string;
  readonly log: Pick<Logger, "error" | "warn"> & Partial<Pick<Logger, "debug">>;
  /** Default `pgboss`. */
  readonly schema?: string;
  /**
   * Run pg-boss's maintenance (expiring, retrying and archiving jobs) in this process.
   * Default true. A process that only sends jobs (a CLI command) turns it off.
   */
  readonly supervise?: boolean;
  /** Run pg-boss's cron scheduler in this process. Default true. */
  readonly schedule?: boolean;
}

/**
 * annal's background jobs: a started pg-boss and the few things every user of it needs.
 * Handlers registered with `boss.work` receive arrays of jobs.
 */
export interface Jobs {
  readonly boss: PgBoss;
  readonly schema: string;
  /**
   * Creates `name` unless it exists (pg-boss needs a queue before `send`); safe to call from
   * many processes at once. Options apply when the queue is created: an existing queue keeps
   * its own (change them with `boss.updateQueue`). A new queue has a heartbeat of
   * `JOB_HEARTBEAT_SECONDS` unless `options` say otherwise.
   */
  ensureQueue(name: string, options?: Omit<Queue, "name">): Promise<void>;
  /**
   * A pg-boss `db` for statements inside the caller's transaction: pass it as `{ db }` to
   * `send`, and the job commits, or rolls back, with what else the transaction writes.
   * `prepared`: see `inTransaction`.
   */
  inTransaction(tx: Queryable, options?: InTransactionOptions): Db;
  /** Stops the workers (letting running handlers finish) and pg-boss's timers. */
  stop(): Promise<void>;
}

/**
 * Starts pg-boss in its own schema of annal's database, installing or migrating that schema
 * first (pg-boss serialises this across processes with an advisory lock).
 *
 * @example
 * const jobs = await startJobs({ pool, log });
 * await jobs.ensureQueue("reports", { retryLimit: 3, retryBackoff: true });
 * await jobs.boss.work("reports", { batchSize: 20 }, async (batch) => { ... });
 * await jobs.stop();
 */
export async function startJobs(options: StartJobsOptions): Promise<Jobs> {
  const schema = options.schema ?? JOBS_SCHEMA;
  const connection: ConstructorOptions =
    options.pool !== undefined
      ? { db: poolDb(options.pool, options.log), useListenNotify: true }
      : options.connectionString !== undefined
        ? { connectionString: options.connectionString, max: 4, application_name: "annal-jobs" }
        : missingConnection();
  const boss = new PgBoss({
    ...connection,
    schema,
    supervise: options.supervise ?? true,
    // The monitor runs within the supervisor's pass, so both come this often; one process at a
    // time runs a pass (pg-boss takes a per-queue try-lock), however many supervise.
    superviseIntervalSeconds: JOB_MONITOR_INTERVAL_SECONDS,
    monitorIntervalSeconds: JOB_MONITOR_INTERVAL_SECONDS,
    // The queues' stats (what is ready) as the workers read them, as often as the monitor makes
    // them: a worker's burst through a backlog starts when they show one (60 s by default).
    queueCacheIntervalSeconds: JOB_MONITOR_INTERVAL_SECONDS,
    schedule: options.schedule ?? true,
    migrate: true,
  });
  // pg-boss emits `error` for failures of its own loops (maintenance, a fetch); an EventEmitter
  // with no listener for `error` would throw it and end the process.
  boss.on("error", (error) => logLoopFailure(options.log, error, {}, "pg-boss reported an error"));
  boss.on("warning", (warning) => options.log.warn({ warning }, `pg-boss: ${warning.message}`));
  await boss.start();
  let stopped: Promise<void> | undefined;
  return {
    boss,
    schema,
    // create_queue() inserts with ON CONFLICT DO NOTHING under an advisory lock. Queues made
    // before they had heartbeats were given one by a migration.
    ensureQueue: (name, queueOptions) =>
      boss.createQueue(name, { heartbeatSeconds: JOB_HEARTBEAT_SECONDS, ...queueOptions }),
    inTransaction,
    stop() {
      stopped ??= boss.stop({ graceful: true, close: true, timeout: 10_000 });
      return stopped;
    },
  };
}

/**
 * pg-boss's `Db` over our pool or a transaction's client. pg answers a query of several
 * statements (pg-boss's supervision sends such) with an array of results, one a statement;
 * pg-boss reads that shape as its own pg adapter returns it, so it is passed on as such
 * (taking only `rows` of it gave `rows: undefined`, and the monitor failed every minute).
 */
export function inTransaction(db: Queryable, options: InTransactionOptions = {}): Db {
  return {
    executeSql: async (text, values) => {
      const result: unknown = await db.query(
        options.prepared ? { name: preparedName(text), text, values: values ?? [] } : text,
        options.prepared ? undefined : values,
      );
      if (Array.isArray(result)) {
        return result.map((each: { rows: unknown[] }) => ({ rows: each.rows })) as unknown as {
          rows: unknown[];
        };
      }
      return { rows: (result as { rows: unknown[] }).rows };
    },
  };
}

export interface InTransactionOptions {
  /**
   * Prepare each statement on its connection, named by its text, so that PostgreSQL parses and
   * plans it once per connection rather than on every call (planning pg-boss's `insert` of a
   * webhook's group of jobs anew took half as long as running it). Only for the few
   * statements whose text does not vary, such as `insert` into a given queue: each distinct
   * text stays prepared on the connection.
   */
  readonly prepared?: boolean;
}

const preparedNames = new Map<string, string>();

function preparedName(text: string): string {
  let name = preparedNames.get(text);
  if (name === undefined) {
    name = `annal-jobs-${createHash("sha256").update(text).digest("hex").slice(0, 32)}`;
    preparedNames.set(text, name);
  }
  return name;
}

/**
 * pg-boss's `Db` over annal's pool, with LISTEN/NOTIFY: a worker of a queue created with
 * `notify: true` is woken the moment a job for it commits, instead of at its next poll. The
 * listener holds one connection of its own, opened beside the pool and not taken from it (a
 * listener holding a pooled connection for good left a pool of one nothing to serve with);
 * when it breaks it is made again (with backoff) and pg-boss told, so that every worker looks
 * once for what came meanwhile.
 */
export function poolDb(pool: Pool, log: Pick<Logger, "warn"> & Partial<Pick<Logger, "debug">>): Db {
  return {
    ...inTransaction(pool),
    async listen(channel, onNotification, onReconnect) {
      let closed = false;
      let client: pg.Client | undefined;
      let attempt = 0;
      const subscribe = async () => {
        const connection = sideConnection(pool, "annal-jobs-listener");
        connection.on("notification", (message) => {
          if (message.channel === channel) onNotification(message.payload ?? "");
        });
        connection.on("error", (error) => {
          if (closed || client !== connection) return;
          log.warn({ err: error }, "the jobs' notification listener broke; listening again");
          client = undefined;
          connection.end().catch(() => {});
          void again();
        });
        try {
          await connection.connect();
          await connection.query(`LISTEN "${channel.replaceAll('"', '""')}"`);
        } catch (error) {
          await connection.end().catch(() => {});
          throw error;
        }
        client = connection;
        attempt = 0;
        onReconnect();
      };
      const again = async () => {
        while (!closed && !client) {
          await new Promise((resolve) =>
            setTimeout(resolve, Math.min(5_000, 500 * 2 ** attempt++)),
          );
          await subscribe().catch((error: unknown) =>
            (isDatabaseUnreachable(error) ? log.debug : log.warn)?.call(
              log,
              { err: error },
              "the jobs' notification listener could not listen yet",
            ),
          );
        }
      };
      await subscribe();
      return {
        async close() {
          closed = true;
          const connection = client;
          client = undefined;
          if (!connection) return;
          await connection.end().catch(() => {});
        },
      };
    },
  };
}

function missingConnection(): never {
  throw new AnnalError("ANNAL_INTERNAL", "startJobs needs a pool or a connectionString");
}
