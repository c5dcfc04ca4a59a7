import type { PoolClient } from "../../db/index.ts";
import {
  eventColumns,
  logPositionCompare,
  recordedEventAt,
  type LogPosition,
  type RecordedEvent,
} from "../../store/index.ts";

/**
 * The events of `streamIds` before `cut` in log order, by stream, each stream's in version
 * order: what a retention batch folds. `E` is the events' type, as the caller knows its streams.
 */
export async function streamEventsBefore<E extends RecordedEvent>(
  tx: PoolClient,
  streamIds: readonly string[],
  cut: LogPosition,
): Promise<Map<string, E[]>> {
  const params: unknown[] = [streamIds];
  const result = await tx.query<unknown[]>({
    text: `SELECT ${eventColumns("e")} FROM events AS e
            WHERE e.stream_id = ANY($1::text[]) AND ${logPositionCompare("e", "<", cut, params)}
            ORDER BY e.stream_id, e.stream_version`,
    values: params,
    rowMode: "array",
  });
  const byStream = new Map<string, E[]>();
  for (const row of result.rows) {
    const event = recordedEventAt(row) as unknown as E;
    const events = byStream.get(event.streamId) ?? [];
    events.push(event);
    byStream.set(event.streamId, events);
  }
  return byStream;
}
