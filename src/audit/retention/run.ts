import type { Pool, PoolClient } from "../../db/index.ts";
import {
  annalEvent,
  ENTRY_EVENT,
  RETENTION_STREAM,
  type ChainHeadRef,
  type EntryEventType,
  type RecordedOf,
  type StreamCheckpointed,
} from "../../events/index.ts";
import {
  appendInTransaction,
  logOrder,
  logPositionColumns,
  logPositionCompare,
  logPositionOf,
  type LogPosition,
  type LogPositionRow,
} from "../../store/index.ts";
import { erasedDigests } from "../erasure/digests.ts";
import { readChainHead } from "../chain/rows.ts";
import { RetentionInProgressError } from "../errors.ts";
import { foldEntryStream } from "./fold.ts";
import {
  replacedBy,
  replaceWithCheckpoints,
  streamEventsBefore,
  type StreamFold,
} from "./batch.ts";
import { keptDigest } from "./kept-digest.ts";
import { dropEmptyPartitionsBefore } from "./partitions.ts";
import { collectWorkflowStreams, foldWorkflowBatch, workflowStreamsPage } from "./workflows.ts";

export interface RetentionOptions {
  /** The horizon: events that occurred before it are folded (entries' streams). */
  readonly horizon: Date;
  /** Work it all out and report, then roll back: nothing changes. */
  readonly dryRun?: boolean;
  /**
   * The workflow instances' horizon: the streams of instances that finished before it (and
   * before the cut) are folded too. Undefined: instances are kept whole.
   */
  readonly workflowHorizon?: Date;
  /** Streams folded per statement batch; default 500. */
  readonly batchSize?: number;
  /** Called after each batch: streams folded, and how many there are to fold. */
  readonly onProgress?: (done: number, total: number) => void;
}

export interface RetentionReport {
  readonly horizon: Date;
  readonly dryRun: boolean;
  /** The first event kept in the chain; undefined when there was nothing to remove. */
  readonly cut: LogPosition | undefined;
  readonly chainHead: ChainHeadRef | undefined;
  /** Streams folded, entries' and workflow instances'. */
  readonly streamsFolded: number;
  /** Of those, workflow instances'. */
  readonly workflowsFolded: number;
  readonly eventsRemoved: number;
  /** Partitions dropped whole (they held only removed events). */
  readonly partitionsDropped: readonly string[];
}

/** One run at a time, across processes. */
const RETENTION_LOCK = "annal.retention";

/**
 * Folds the log before `horizon` (docs/retention.md), in one transaction:
 *
 * 1. The cut: the first entry event in log order that occurred at or after the horizon, or
 *    the chain's head if that comes first. Only chained events are removed, and the head link is
 *    always kept, so the chain goes on from where it was.
 * 2. Each entry's stream with events before the cut is folded into a `StreamCheckpointed`
 *    that takes the place (position, transaction, version) of the last event it replaces;
 *    those events go. With `workflowHorizon`, so is each instance's stream that finished
 *    before it and the cut, into a `WorkflowCheckpointed` (`./workflows.ts`). Readers meet the checkpoint where that event was, in log order and in
 *    stream order, so projections replay to the tables they had after the horizon.
 * 3. The chain's links before the cut go. The kept chain starts at the cut, its first link
 *    following the last removed one, which `LogRetained` names (`chainHead`) together with a
 *    digest over what is left before the cut (checkpoints, kinds kept whole).
 *
 * Afterwards, partitions before the cut that hold nothing more are dropped. Projections must
 * then be rebuilt from the log (`src/app/retention.ts` does), which also removes what they
 * held of the removed events.
 */
export async function runRetention(
  pool: Pool,
  options: RetentionOptions,
): Promise<RetentionReport> {
  const { horizon } = options;
  const dryRun = options.dryRun ?? false;
  const client = await pool.connect();
  let report: RetentionReport;
  try {
    await client.query("BEGIN");
    try {
      const locked = await client.query<{ ok: boolean }>(
        "SELECT pg_try_advisory_xact_lock(hashtext($1)) AS ok",
        [RETENTION_LOCK],
      );
      if (!locked.rows[0]?.ok) throw new RetentionInProgressError();
      report = await retainInTransaction(client, horizon, dryRun, options);
      await client.query(dryRun ? "ROLLBACK" : "COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
  } finally {
    client.release();
  }
  if (dryRun || !report.cut) return report;
  const partitionsDropped = await dropEmptyPartitionsBefore(pool, report.cut.position);
  return { ...report, partitionsDropped };
}

async function retainInTransaction(
  tx: PoolClient,
  horizon: Date,
  dryRun: boolean,
  options: RetentionOptions,
): Promise<RetentionReport> {
  const nothing: RetentionReport = {
    horizon,
    dryRun,
    cut: undefined,
    chainHead: undefined,
    streamsFolded: 0,
    workflowsFolded: 0,
    eventsRemoved: 0,
    partitionsDropped: [],
  };
  const head = await readChainHead(tx);
  if (!head) return nothing;
  const cut = await findCut(tx, horizon, head.at);
  const covered = await linkBefore(tx, cut);
  if (!covered) return nothing;
  const chainHead = { position: covered.at.position, hash: covered.hash.toString("hex") };

  const total = await collectStreams(tx, cut);
  const batchSize = options.batchSize ?? 500;
  let streamsFolded = 0;
  let eventsRemoved = 0;
  let done = 0;
  for (let offset = 0; offset < total; offset += batchSize) {
    const streams = await tx.query<{ stream_id: string }>(
      "SELECT stream_id FROM retention_streams ORDER BY stream_id OFFSET $1 LIMIT $2",
      [offset, batchSize],
    );
    const folded = await foldBatch(
      tx,
      streams.rows.map((row) => row.stream_id),
      cut,
      horizon,
      chainHead,
    );
    streamsFolded += folded.streams;
    eventsRemoved += folded.removed;
    done += streams.rows.length;
    options.onProgress?.(done, total);
  }
  if (total === 0) options.onProgress?.(0, 0);
  let workflowsFolded = 0;
  if (options.workflowHorizon) {
    const instances = await collectWorkflowStreams(tx, cut, options.workflowHorizon);
    for (let offset = 0; offset < instances; offset += batchSize) {
      const streams = await workflowStreamsPage(tx, offset, batchSize);
      const folded = await foldWorkflowBatch(tx, streams, cut, options.workflowHorizon, chainHead);
      workflowsFolded += folded.streams;
      eventsRemoved += folded.removed;
    }
    streamsFolded += workflowsFolded;
  }

  const params: unknown[] = [];
  await tx.query(
    `DELETE FROM event_chain AS c WHERE ${logPositionCompare("c", "<", cut, params)}`,
    params,
  );
  const kept = await keptDigest(tx, cut, await erasedDigests(tx));
  await tx.query(
    `INSERT INTO log_retention (horizon, cut_position, cut_transaction_id, head_position,
                                head_hash, streams_folded, events_removed, workflow_horizon)
     VALUES ($1, $2, $3::xid8, $4, $5, $6, $7, $8)`,
    [
      horizon,
      cut.position,
      cut.transactionId,
      covered.at.position,
      covered.hash,
      streamsFolded,
      eventsRemoved,
      options.workflowHorizon ?? null,
    ],
  );
  await appendInTransaction(
    tx,
    RETENTION_STREAM,
    [
      annalEvent("LogRetained", {
        horizon: horizon.toISOString(),
        ...(options.workflowHorizon && {
          workflowHorizon: options.workflowHorizon.toISOString(),
        }),
        cut: { position: cut.position, transactionId: cut.transactionId },
        chainHead,
        keptDigest: kept.digest.toString("hex"),
        keptEvents: kept.count,
        streamsFolded,
        eventsRemoved,
      }),
    ],
    "any",
  );
  return {
    horizon,
    dryRun,
    cut,
    chainHead,
    streamsFolded,
    workflowsFolded,
    eventsRemoved,
    partitionsDropped: [],
  };
}

/**
 * The first entry event, in log order, that occurred at or after `horizon`, but never past the
 * chain's head (`head`): what is not chained yet is never removed. Events of other kinds are
 * kept wherever they are, so their moments do not place the cut.
 */
async function findCut(tx: PoolClient, horizon: Date, head: LogPosition): Promise<LogPosition> {
  const params: unknown[] = [horizon];
  const result = await tx.query<LogPositionRow>(
    `SELECT ${logPositionColumns("e")} FROM events AS e
      WHERE e.occurred_at >= $1 AND e.stream_id LIKE 'entry-%'
        AND ${logPositionCompare("e", "<=", head, params)}
      ORDER BY ${logOrder("e")} LIMIT 1`,
    params,
  );
  const row = result.rows[0];
  return row ? logPositionOf(row) : head;
}

/** The chain's last link before `cut` in log order. */
async function linkBefore(
  tx: PoolClient,
  cut: LogPosition,
): Promise<{ at: LogPosition; hash: Buffer } | undefined> {
  const params: unknown[] = [];
  const result = await tx.query<LogPositionRow & { hash: Buffer }>(
    `SELECT ${logPositionColumns("c")}, c.hash FROM event_chain AS c
      WHERE ${logPositionCompare("c", "<", cut, params)}
      ORDER BY ${logOrder("c", "backward")} LIMIT 1`,
    params,
  );
  const row = result.rows[0];
  return row && { at: logPositionOf(row), hash: row.hash };
}

/**
 * The entries' streams with something to fold before `cut` (more than a checkpoint alone),
 * into a table of the transaction; how many.
 */
async function collectStreams(tx: PoolClient, cut: LogPosition): Promise<number> {
  const params: unknown[] = [];
  await tx.query(
    `CREATE TEMPORARY TABLE retention_streams ON COMMIT DROP AS
       SELECT e.stream_id FROM events AS e
        WHERE e.stream_id LIKE 'entry-%' AND ${logPositionCompare("e", "<", cut, params)}
        GROUP BY e.stream_id
       HAVING count(*) > 1 OR bool_and(e.type <> '${ENTRY_EVENT.checkpointed}')`,
    params,
  );
  const count = await tx.query<{ n: string }>("SELECT count(*)::text AS n FROM retention_streams");
  return Number(count.rows[0]!.n);
}

async function foldBatch(
  tx: PoolClient,
  streamIds: readonly string[],
  cut: LogPosition,
  horizon: Date,
  chainHead: ChainHeadRef,
): Promise<{ streams: number; removed: number }> {
  const byStream = await streamEventsBefore<RecordedOf<EntryEventType>>(tx, streamIds, cut);
  const folds = new Map<string, StreamFold>();
  let removed = 0;
  for (const [streamId, events] of byStream) {
    const data: StreamCheckpointed = {
      ...foldEntryStream(events),
      horizon: horizon.toISOString(),
      replaced: replacedBy(events),
      chainHead,
    };
    folds.set(streamId, { events, data });
    removed += events.length;
  }
  await replaceWithCheckpoints(tx, cut, ENTRY_EVENT.checkpointed, folds);
  return { streams: byStream.size, removed };
}
