import { logPositionColumns, logPositionOf, type LogPositionRow } from "./log-order.ts";
import type { EventMetadata, RecordedEvent } from "./types.ts";

/** An `events` row as pg returns it (int8 parsed to number, xid8 as text). */
export interface EventRow extends LogPositionRow {
  id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  idempotency_key: string | null;
  occurred_at: Date;
  recorded_at: Date;
}

/** The select list of an event row of `table` (an alias of `events`, or a CTE of its rows). */
export function eventColumns(table: string): string {
  return `${logPositionColumns(table)}, ${table}.id, ${table}.stream_id, ${table}.stream_version,
          ${table}.type, ${table}.data, ${table}.metadata, ${table}.idempotency_key,
          ${table}.occurred_at, ${table}.recorded_at`;
}

export function toRecordedEvent<Data>(row: EventRow): RecordedEvent<Data> {
  return {
    id: row.id,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    type: row.type,
    data: row.data as Data,
    metadata: row.metadata,
    occurredAt: row.occurred_at,
    recordedAt: row.recorded_at,
    idempotencyKey: row.idempotency_key,
    ...logPositionOf(row),
  };
}
