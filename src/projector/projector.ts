import type pg from "pg";
import type { Logger } from "pino";
import { logLoopFailure, sideConnection, withTransaction, type Pool } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import { projectionLag, projectionPosition } from "../metrics.ts";
import {
  EVENTS_CHANNEL,
  START,
  comparePositions,
  countAfter,
  eventsNotifier,
  type LogPosition,
} from "../store/index.ts";
import { applyBatch, lockProjection } from "./apply-batch.ts";
import { buildReaderIndexes } from "./reader-indexes.ts";
import { rebuildProjection } from "./rebuild.ts";
import type { FirstSnapshotsOptions } from "./first-snapshots.ts";
import { SharedLogReads } from "./shared-reads.ts";
import { Turns } from "./turns.ts";
import {
  assertProjectionName,
  createProjectionSchema,
  quoteIdentifier,
  readCheckpoint,
  schemaNames,
} from "./schema.ts";
import type { AnyProjection, ProjectionStatus } from "./types.ts";

export interface ProjectorOptions {
  readonly pool: Pool;
  readonly projections: readonly AnyProjection[];
  readonly log: Pick<Logger, "info" | "warn" | "error">;
  readonly batchSize?: number;
  /** The polling fallback when no notification arrives; default 1 s. */
  readonly pollInterval?: number;
  /**
   * How a run of first snapshots is built in bulk (`applyFirstSnapshotsInBulk`): its chunks,
   * and from how many events on the readers' indexes are built after the load (default
   * `INDEXES_AFTER`).
   */
  readonly firstSnapshots?: FirstSnapshotsOptions;
  /**
   * How often each projection's live schema is checked for missing or invalid readers'
   * indexes (`buildReaderIndexes`), besides at start and after a first start's bulk load;
   * default 60 s. A check finds nothing to do in one catalog query.
   */
  readonly indexCheckInterval?: number;
  /**
   * How many projections apply batches at once while catching up from the start (a first
   * start's bulk loads), the earliest in `projections`' order first; default 2.
   */
  readonly catchUpTogether?: number;
  /**
   * A notification wakes the first projection (`entries`, which the readers wait for) alone,
   * and the others once its batch has ended, or at the latest this many ms after (default
   * `OTHERS_HELD_AT_MOST`).
   */
  readonly othersHeldAtMost?: number;
}

/**
 * A first start of this many entries or more builds the readers' indexes after the load:
 * below it, keeping them costs less than building them (bench/RESULTS.md, first start).
 */
const INDEXES_AFTER = 5_000;

/**
 * How many full batches the projector keeps for projections that have not read them yet:
 * the projections catching up move at different speeds, and one that falls further behind
 * reads for itself.
 */
const SHARED_BATCHES = 4;

/**
 * `ProjectorOptions.othersHeldAtMost`'s default: longer than the first projection's batch of a
 * few changes takes, short beside the poll interval the others would otherwise wait for.
 */
const OTHERS_HELD_AT_MOST = 100;

/** `ProjectorOptions.indexCheckInterval`'s default. */
const INDEX_CHECK_INTERVAL = 60_000;

/**
 * A projection's position and lag metrics are read again at most this often: two queries
 * after every batch were two for every write for each projection, on the way of the next.
 */
const METRICS_EVERY_MS = 1000;

/**
 * Runs projections: each one is caught up at start (rebuilt side by side first when its
 * version changed in code) and then tails the log, woken by the NOTIFY every append sends
 * and, as a fallback, by polling (a transaction that ends without appending sends nothing,
 * yet can release events held back behind it).
 */
export class Projector {
  private readonly options: ProjectorOptions;
  private readonly batchSize: number;
  private readonly pollInterval: number;
  /** Notifications of appends so far: a loop that was not sleeping when one came reads again. */
  private notifications = 0;
  private listener: pg.Client | undefined;
  /** Ends the wake-ups by this process's own appends on the pool (`EventsNotifier.onPoke`). */
  private unlisten: (() => void) | undefined;
  private running = true;
  /** Loops sleeping until the next notification or their poll interval, by rank. */
  private readonly sleepers = new Map<() => void, number>();
  /**
   * While a notification's wake-up of the projections after the first waits for the first's
   * batch to end (`notified`): the timer that ends the wait at the latest.
   */
  private othersHeld: NodeJS.Timeout | undefined;
  private readonly othersHeldAtMost: number;
  /** When each projection's metrics were last read (`performance.now()`). */
  private readonly metricsAt = new Map<string, number>();
  private readonly loops: Promise<void>[] = [];
  /** The projections catching up together read each batch of the log once. */
  private readonly reads: SharedLogReads;
  private readonly indexCheckInterval: number;
  /** When each projection's readers' indexes are checked next (`performance.now()`). */
  private readonly indexChecks = new Map<string, number>();
  /** The readers' index build under way (one at a time), and its backend. */
  private indexBuild: Promise<void> | undefined;
  private indexBuilder: number | undefined;
  /** Projections whose bulk load dropped their readers' indexes: checked at once. */
  private readonly indexesDue = new Set<string>();
  /**
   * Projections that have not reached the log's head since the projector started, or since a
   * bulk load of first snapshots began: no readers' index is built while one is catching up
   * (a first start's bulk loads), so the builds neither take a core from the loads nor wait
   * on their transactions, and they are built in the projector's order once all are done.
   */
  private readonly catchingUp: Set<string>;
  /**
   * The projections catching up take turns (`catchUpTogether`), in the projector's order: at
   * a first start, six bulk loads side by side on two cores gave `entries`, which the REST
   * channel reads, a third of a core (bench/RESULTS.md, first start).
   */
  private readonly turns: Turns;
  private readonly stopping = new AbortController();

  private constructor(options: ProjectorOptions) {
    this.options = options;
    this.batchSize = options.batchSize ?? 500;
    this.pollInterval = options.pollInterval ?? 1000;
    this.reads = new SharedLogReads({ keep: SHARED_BATCHES });
    this.indexCheckInterval = options.indexCheckInterval ?? INDEX_CHECK_INTERVAL;
    this.othersHeldAtMost = options.othersHeldAtMost ?? OTHERS_HELD_AT_MOST;
    this.catchingUp = new Set(options.projections.map((projection) => projection.name));
    this.turns = new Turns(options.catchUpTogether ?? 2);
  }

  static async start(options: ProjectorOptions): Promise<Projector> {
    const projector = new Projector(options);
    for (const projection of options.projections) assertProjectionName(projection.name);
    await projector.listen();
    for (const projection of options.projections) await projector.prepare(projection);
    for (const projection of options.projections) projector.loops.push(projector.run(projection));
    return projector;
  }

  /** Creates the live schema on first start, or rebuilds it when its version changed. */
  private async prepare(projection: AnyProjection): Promise<void> {
    const { pool, log } = this.options;
    const live = schemaNames(projection.name).live;
    const checkpoint = await readCheckpoint(pool, live);
    if (!checkpoint) {
      await withTransaction(pool, async (tx) => {
        await lockProjection(tx, live);
        if (!(await readCheckpoint(tx, live))) await createProjectionSchema(tx, live, projection);
      });
      return;
    }
    if (checkpoint.version !== projection.version) {
      log.info(
        { projection: projection.name, from: checkpoint.version, to: projection.version },
        "projection version changed: rebuilding side by side",
      );
      await rebuildProjection({ pool, projection });
    }
  }

  private async listen(): Promise<void> {
    // An append in this process on the pool (capture's, say) wakes the loops as it commits:
    // its NOTIFY comes back a round trip or more later, when the pool is busy many more.
    const notifier = eventsNotifier(this.options.pool);
    this.unlisten = notifier.onPoke(() => this.notified());
    // Beside the pool, not from it: a listener holds its connection for good (sideConnection).
    const listener = sideConnection(this.options.pool, "annal-projector-listener");
    // A broken listener only leaves the loops to their polling; it must not end the process.
    listener.on("error", () => {});
    this.listener = listener;
    await listener.connect();
    // Its own pokes' notifications, which woke the loops already, would only have each read
    // an empty batch again.
    listener.on("notification", (message) => {
      if (message.payload !== notifier.token) this.notified();
    });
    await listener.query(`LISTEN ${quoteIdentifier(EVENTS_CHANNEL)}`);
  }

  private async run(projection: AnyProjection): Promise<void> {
    const { pool, log } = this.options;
    const live = schemaNames(projection.name).live;
    let failures = 0;
    const rank = this.options.projections.indexOf(projection);
    while (this.running) {
      let indexesDropped = false;
      let applied: number;
      const alone = { alone: projection.catchUpAlone ?? false };
      let turn = this.catchingUp.has(projection.name)
        ? await this.turns.take(rank, alone)
        : undefined;
      // A notification that comes while this loop reads or applies finds it not sleeping.
      const notifiedBefore = this.notifications;
      if (!this.running) {
        turn?.(); // stopped while it waited for its turn
        return;
      }
      try {
        applied = await withTransaction(pool, async (tx) => {
          // A projection is the log's to rebuild (DESIGN.md), so its commit need not wait for
          // the disk: a crash of the database loses at most its last batches, with their
          // checkpoint, and they are applied again. The wait was on every change's way to
          // the readers, once for each projection.
          await lockProjection(tx, live, { commitWithoutWaiting: true });
          return applyBatch(tx, projection, live, this.batchSize, {
            read: this.reads.read,
            firstSnapshots: {
              indexesAfter: INDEXES_AFTER,
              ...this.options.firstSnapshots,
              // A bulk load that comes after the projection had caught up (as `annal start`
              // has it: the projector tails an empty log until capture's first import commits)
              // catches up again: it takes a turn, and no readers' index build starts until it
              // and every other load are done.
              starting: async () => {
                this.catchingUp.add(projection.name);
                turn ??= await this.turns.take(rank, alone);
              },
              done: (bulk) => {
                indexesDropped ||= bulk.indexesDropped > 0;
                log.info(
                  {
                    projection: projection.name,
                    events: bulk.events,
                    chunks: bulk.chunks,
                    applyMs: Math.round(bulk.applyMs),
                    indexesDropped: bulk.indexesDropped,
                  },
                  "first snapshots applied in bulk",
                );
              },
            },
          });
        });
      } catch (error) {
        turn?.();
        if (!this.running) return;
        failures++;
        // A projection that fails does not hold back the others' turns and indexes.
        this.catchingUp.delete(projection.name);
        logLoopFailure(
          log,
          error,
          { projection: projection.name },
          "projection batch failed; retrying",
        );
        if (rank === 0) this.wakeOthers();
        await this.sleep(Math.min(30_000, 250 * 2 ** failures), rank);
        continue;
      }
      turn?.();
      failures = 0;
      // Its batch is committed: the others' turn (`notified`).
      if (rank === 0) this.wakeOthers();
      // Committed: a build may look for the dropped indexes now.
      if (indexesDropped) this.indexesDue.add(projection.name);
      if (applied < this.batchSize) this.catchingUp.delete(projection.name);
      this.buildIndexes();
      if (applied >= this.batchSize) continue;
      const now = performance.now();
      if (now - (this.metricsAt.get(projection.name) ?? -Infinity) >= METRICS_EVERY_MS) {
        this.metricsAt.set(projection.name, now);
        try {
          await this.refreshMetrics(projection);
        } catch (error) {
          if (!this.running) return;
          logLoopFailure(log, error, { projection: projection.name }, "projection metrics failed");
        }
      }
      // Notified meanwhile: what was appended may be past the batch just read.
      if (this.notifications !== notifiedBefore) continue;
      await this.sleep(this.pollInterval, rank);
    }
  }

  /**
   * Starts building the readers' indexes of the first projection, in the projector's order,
   * whose check is due (at start, at once after a bulk load dropped them, then every
   * `indexCheckInterval`), in the background: the projections go on applying the log
   * meanwhile. One build at a time, and none while a projection is still catching up from the
   * start: in `allProjections`' order, the indexes the REST channel's searches read are built
   * first, each build with the machine to itself (bench/RESULTS.md, the soak: two concurrent
   * builds each waited for the other's snapshot to finish). Across processes, the build's lock
   * decides (`buildReaderIndexes`).
   */
  private buildIndexes(): void {
    if (!this.running || this.indexBuild || this.catchingUp.size > 0) return;
    const now = performance.now();
    const projection = this.options.projections.find(
      ({ name }) => this.indexesDue.has(name) || now >= (this.indexChecks.get(name) ?? 0),
    );
    if (!projection) return;
    const { name } = projection;
    this.indexesDue.delete(name);
    const { pool, log } = this.options;
    this.indexBuild = buildReaderIndexes({
      pool,
      projection,
      schema: schemaNames(name).live,
      log,
      signal: this.stopping.signal,
      running: (pid) => {
        this.indexBuilder = pid;
      },
    })
      .then(
        (outcome) => {
          if (outcome === "busy") {
            log.info({ projection: name }, "readers' indexes being built by another process");
          }
        },
        (error: unknown) => {
          if (!this.running) return;
          logLoopFailure(log, error, { projection: name }, "building readers' indexes failed");
        },
      )
      .finally(() => {
        this.indexChecks.set(name, performance.now() + this.indexCheckInterval);
        this.indexBuild = undefined;
        // The next projection due, if any, at once.
        this.buildIndexes();
      });
  }

  private async refreshMetrics(projection: AnyProjection): Promise<void> {
    const checkpoint = await readCheckpoint(this.options.pool, schemaNames(projection.name).live);
    if (!checkpoint) return;
    projectionPosition.set({ projection: projection.name }, checkpoint.position);
    projectionLag.set(
      { projection: projection.name },
      await countAfter(this.options.pool, checkpoint),
    );
  }

  /** Until `ms` have passed or a notification comes; `rank`: the projection's place. */
  private sleep(ms: number, rank: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.sleepers.set(done, rank);
    });
  }

  /**
   * Appends were committed. When the first projection (`entries`, which the REST channel and
   * GraphQL read) sleeps, it alone is woken, and the others once its batch has ended (or
   * `othersHeldAtMost` later): woken together, seven projections each applied the change in a
   * transaction of their own at once, on a machine of two cores, and the readers' own waited
   * its turn among them (bench/RESULTS.md, capture lag through REST). When the first is busy
   * (a batch under way, its turn at a first start) the others are not held for it.
   */
  private notified(): void {
    this.notifications++;
    const first = [...this.sleepers].find(([, rank]) => rank === 0)?.[0];
    if (first && this.sleepers.size > 1) {
      first();
      this.othersHeld ??= setTimeout(() => this.wakeOthers(), this.othersHeldAtMost);
      return;
    }
    clearTimeout(this.othersHeld);
    this.othersHeld = undefined;
    this.wakeAll();
  }

  /** Ends a wait of the others for the first projection's batch, if one is under way. */
  private wakeOthers(): void {
    if (this.othersHeld === undefined) return;
    clearTimeout(this.othersHeld);
    this.othersHeld = undefined;
    this.wakeAll();
  }

  /**
   * Wakes every sleeping loop, in the projector's order: the first woken asks for its
   * connection and sends its statements first.
   */
  private wakeAll(): void {
    const woken = [...this.sleepers].sort(([, a], [, b]) => a - b);
    for (const [wake] of woken) wake();
  }

  status(): Promise<ProjectionStatus[]> {
    return projectionStatus(this.options.pool, this.options.projections);
  }

  async stop(): Promise<void> {
    this.unlisten?.();
    this.running = false;
    this.stopping.abort();
    clearTimeout(this.othersHeld);
    this.othersHeld = undefined;
    this.wakeAll();
    await Promise.all(this.loops);
    // A build cancelled leaves an invalid index, which the next start builds again.
    if (this.indexBuilder !== undefined) {
      await this.options.pool
        .query("SELECT pg_cancel_backend($1)", [this.indexBuilder])
        .catch(() => {});
    }
    await this.indexBuild;
    if (this.listener) {
      const listener = this.listener;
      this.listener = undefined;
      await listener.end().catch(() => {});
    }
  }
}

/** Each projection's version, position and lag, read from the database. */
export async function projectionStatus(
  pool: Pool,
  projections: readonly AnyProjection[],
): Promise<ProjectionStatus[]> {
  return Promise.all(
    projections.map(async (projection) => {
      const checkpoint = await readCheckpoint(pool, schemaNames(projection.name).live);
      const position = checkpoint ?? START;
      return {
        name: projection.name,
        version: projection.version,
        builtVersion: checkpoint?.version,
        position: { transactionId: position.transactionId, position: position.position },
        lag: await countAfter(pool, position),
      };
    }),
  );
}

/** A reader asked to wait for a projection that did not get there in time. */
export class ProjectionTimeoutError extends AnnalError {
  constructor(projection: string, timeoutMs: number) {
    super(
      "ANNAL_PROJECTION_TIMEOUT",
      `projection ${projection} did not reach the requested position within ${timeoutMs} ms`,
      { status: 503, hint: "retry shortly; GET /readyz shows each projection's lag" },
    );
  }
}

/**
 * Read-your-writes: resolves once `projection` has applied everything up to `position`
 * (typically the position an append returned), or once `signal` is aborted. The checkpoint is
 * a one-row read, so polling it briefly is cheaper than a listening connection per waiting
 * request.
 */
export async function waitForProjection(
  pool: Pool,
  projection: string,
  position: LogPosition,
  timeoutMs = 5000,
  signal?: AbortSignal,
): Promise<void> {
  const live = schemaNames(projection).live;
  const deadline = Date.now() + timeoutMs;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    if (signal?.aborted) return;
    const checkpoint = await readCheckpoint(pool, live);
    if (checkpoint && comparePositions(checkpoint, position) >= 0) return;
    if (Date.now() >= deadline) throw new ProjectionTimeoutError(projection, timeoutMs);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
