import type { EventMetadata, RecordedEvent } from "./types.ts";

/** An `events` row as pg returns it (int8 parsed to number, xid8 as text). */
export interface EventRow {
  position: number;
  transaction_id: string;
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

/**
 * Note the alias: `transaction_id` comes back as text, so a query must order by the column
 * itself (`events.transaction_id`), never by the output name, which would sort "1000"
 * before "999".
 */
export const EVENT_COLUMNS =
  "position, transaction_id::text AS transaction_id, id, stream_id, stream_version, type, data, metadata, idempotency_key, occurred_at, recorded_at";

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
    transactionId: row.transaction_id,
    position: row.position,
  };
}
