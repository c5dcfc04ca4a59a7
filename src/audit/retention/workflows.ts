import type { PoolClient } from "../../db/index.ts";
import {
  type ChainHeadRef,
  type InstanceEventType,
  type RecordedOf,
  type WorkflowCheckpointed,
} from "../../events/index.ts";
import { logPositionCompare, type LogPosition } from "../../store/index.ts";
import {
  replacedBy,
  replaceWithCheckpoints,
  streamEventsBefore,
  type StreamFold,
} from "./batch.ts";
import { foldInstance, stateToJson } from "../../../projections/workflows/index.ts";

/** The events that end an instance: after them, nothing of its code runs again by itself. */
const FINISHED = ["WorkflowCompleted", "WorkflowErrored", "WorkflowCancelled"];

/**
 * The finished instances' streams with something to fold before `cut`: the last of their
 * events before it ended the instance (completed, errored or cancelled) before `horizon`, and
 * there is more than a checkpoint of an earlier run. A running or waiting instance is kept
 * whole: the engine replays its stream to resume it. Written to a table of the transaction;
 * returns how many.
 */
export async function collectWorkflowStreams(
  tx: PoolClient,
  cut: LogPosition,
  horizon: Date,
): Promise<number> {
  const params: unknown[] = [horizon, FINISHED];
  await tx.query(
    `CREATE TEMPORARY TABLE retention_workflows ON COMMIT DROP AS
       SELECT e.stream_id FROM events AS e
        WHERE e.stream_id LIKE 'workflow-%' AND e.stream_id NOT LIKE 'workflow-definition-%'
          AND ${logPositionCompare("e", "<", cut, params)}
        GROUP BY e.stream_id
       HAVING count(*) > 1
          AND (array_agg(e.type ORDER BY e.stream_version DESC))[1] = ANY($2::text[])
          AND (array_agg(e.occurred_at ORDER BY e.stream_version DESC))[1] < $1`,
    params,
  );
  const count = await tx.query<{ n: string }>(
    "SELECT count(*)::text AS n FROM retention_workflows",
  );
  return Number(count.rows[0]!.n);
}

/** The streams `collectWorkflowStreams` found, a page at a time. */
export async function workflowStreamsPage(
  tx: PoolClient,
  offset: number,
  limit: number,
): Promise<string[]> {
  const result = await tx.query<{ stream_id: string }>(
    "SELECT stream_id FROM retention_workflows ORDER BY stream_id OFFSET $1 LIMIT $2",
    [offset, limit],
  );
  return result.rows.map((row) => row.stream_id);
}

/**
 * Folds each instance's events before `cut` into one `WorkflowCheckpointed` holding the state
 * they leave (`foldInstance`, the engine's own fold), in the place (position, transaction,
 * version) of the last event it replaces, and removes them: the engine, the projections and
 * every reader of the stream fold on from the checkpoint to the state they had.
 */
export async function foldWorkflowBatch(
  tx: PoolClient,
  streamIds: readonly string[],
  cut: LogPosition,
  horizon: Date,
  chainHead: ChainHeadRef,
): Promise<{ streams: number; removed: number }> {
  const byStream = await streamEventsBefore<RecordedOf<InstanceEventType>>(tx, streamIds, cut);
  const folds = new Map<string, StreamFold>();
  let removed = 0;
  for (const [streamId, events] of byStream) {
    const state = foldInstance(events);
    if (!state) continue; // no start among them: nothing the projections could show
    const data: WorkflowCheckpointed = {
      instanceId: state.id,
      state: stateToJson(state),
      horizon: horizon.toISOString(),
      replaced: replacedBy(events),
      chainHead,
    };
    folds.set(streamId, { events, data });
    removed += events.length;
  }
  await replaceWithCheckpoints(tx, cut, "WorkflowCheckpointed", folds);
  return { streams: folds.size, removed };
}
