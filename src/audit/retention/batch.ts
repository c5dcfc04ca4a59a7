import { randomUUIDv7 } from "node:crypto";
import type { PoolClient } from "../../db/index.ts";
import type { ReplacedEvents } from "../../events/index.ts";
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

/** What a checkpoint of one stream's `events` (in version order, at least one) replaces. */
export function replacedBy(events: readonly RecordedEvent[]): ReplacedEvents {
  return {
    fromPosition: Math.min(...events.map((e) => e.position)),
    toPosition: Math.max(...events.map((e) => e.position)),
    fromVersion: events[0]!.streamVersion,
    toVersion: events.at(-1)!.streamVersion,
    count: events.length,
  };
}

/** One stream's checkpoint: the events it replaces and the checkpoint's data. */
export interface StreamFold {
  readonly events: readonly RecordedEvent[];
  readonly data: unknown;
}

/**
 * Removes the folded streams' events before `cut` and writes each stream's checkpoint (an
 * event of `type`) in the place of the last event it replaces: its position, transaction and
 * version, so every reader meets it where that event was.
 */
export async function replaceWithCheckpoints(
  tx: PoolClient,
  cut: LogPosition,
  type: string,
  folds: ReadonlyMap<string, StreamFold>,
): Promise<void> {
  const deleteParams: unknown[] = [[...folds.keys()]];
  await tx.query(
    `DELETE FROM events AS e
      WHERE e.stream_id = ANY($1::text[]) AND ${logPositionCompare("e", "<", cut, deleteParams)}`,
    deleteParams,
  );
  const checkpoints = [...folds].map(([streamId, { events, data }]) => {
    const last = events.at(-1)!;
    return {
      position: last.position,
      transaction_id: last.transactionId,
      id: randomUUIDv7(),
      stream_id: streamId,
      stream_version: last.streamVersion,
      data,
      occurred_at: last.occurredAt,
    };
  });
  await tx.query(
    `INSERT INTO events (position, transaction_id, id, stream_id, stream_version, type, data,
                         metadata, occurred_at)
     OVERRIDING SYSTEM VALUE
     SELECT c.position, c.transaction_id, c.id, c.stream_id, c.stream_version,
            $2, c.data, '{}', c.occurred_at
       FROM jsonb_to_recordset($1::jsonb) AS c(position bigint, transaction_id xid8, id uuid,
            stream_id text, stream_version bigint, data jsonb, occurred_at timestamptz)`,
    [JSON.stringify(checkpoints), type],
  );
}
