export { EventStore } from "./event-store.ts";
export type { AppendOptions, ReadAllPage } from "./event-store.ts";
export { appendInTransaction } from "./append.ts";
export { EVENTS_CHANNEL, EventsNotifier, eventsNotifier } from "./notify.ts";
export type { AppendResult } from "./append.ts";
export {
  readAll,
  readHead,
  readLastEvent,
  readStream,
  countAfter,
  comparePositions,
} from "./read.ts";
export {
  belowSafeBound,
  logOrder,
  logPositionColumns,
  logPositionCompare,
  logPositionsCompare,
  logPositionOf,
  markLogReader,
  beginLogReader,
} from "./log-order.ts";
export type { LogDirection, LogPositionRow } from "./log-order.ts";
export { appendMark, appendToStreams, storedIdempotencyKeys } from "./append-many.ts";
export type { AppendMark, AppendToStreamsOptions, StreamAppend } from "./append-many.ts";
export { encodeCursor, decodeCursor } from "./cursor.ts";
export { eventColumns, recordedEventAt } from "./rows.ts";
export { LARGE_DATA_BYTES, readJsonInChunks } from "./large-json.ts";
export { jsonbParameter } from "./json-text.ts";
export { WrongExpectedVersionError, InvalidCursorError, ForeignCursorError } from "./errors.ts";
export { START } from "./types.ts";
export { databaseIdentity } from "./epoch.ts";
export { ensurePublication } from "./publication.ts";
export { EventPartitions, ensureEventPartitions } from "./partitions.ts";
export type { PublicationOutcome } from "./publication.ts";
export type {
  EventMetadata,
  ExpectedVersion,
  LogPosition,
  NewEvent,
  RecordedEvent,
} from "./types.ts";
