import { randomUUIDv7 } from "node:crypto";
import pg from "pg";
import type { Queryable } from "../db/index.ts";
import { pausePoint } from "../pause-points.ts";
import { runInSlices, type Slices } from "../slices.ts";
import { WrongExpectedVersionError } from "./errors.ts";
import { logOrder } from "./log-order.ts";
import { EVENTS_CHANNEL, announceAppend } from "./notify.ts";
import { copyStagedData } from "./copy-events.ts";
import { isLargeJson, jsonBytesSlices } from "./json-text.ts";
import { eventColumns, recordedEventAt } from "./rows.ts";
import type { ExpectedVersion, NewEvent, RecordedEvent } from "./types.ts";

/**
 * A new event's id: a UUIDv7, whose leading bits are the time it was made. Ids made in turn
 * land at one end of the id index rather than anywhere in it, so inserting many touches few
 * of its pages (a random UUID touches a page of its own for each).
 */
export function newEventId(): string {
  return randomUUIDv7();
}

export interface AppendResult {
  /** The stream's version after the append. */
  readonly version: number;
  /** One recorded event per event given, in order: new ones, or the originals of repeats. */
  readonly events: readonly RecordedEvent[];
  /** How many of them this call stored (0 when every idempotency key was already known). */
  readonly appended: number;
}

/**
 * Appends `events` to `streamId` inside the caller's transaction (`tx` must be in one).
 *
 * The stream's row is locked first (an upsert), so appends to one stream are serialised and
 * the version check below cannot race. Events whose idempotency key is already stored are not
 * appended again; when that is all of them the call is a repeat and succeeds without a
 * version check (the first attempt's outcome stands), returning the stored events.
 */
export async function appendInTransaction(
  tx: Queryable,
  streamId: string,
  events: readonly NewEvent[],
  expectedVersion: ExpectedVersion,
): Promise<AppendResult> {
  const locked = await tx.query<{ version: number }>(
    `INSERT INTO streams (stream_id, version) VALUES ($1, 0)
     ON CONFLICT (stream_id) DO UPDATE SET updated_at = now()
     RETURNING version`,
    [streamId],
  );
  const current = locked.rows[0]?.version ?? 0;

  const stored = await storedByKey(tx, events);
  const fresh = events.filter(
    (e) => e.idempotencyKey === undefined || !stored.has(e.idempotencyKey),
  );
  if (fresh.length === 0 && events.length > 0) {
    return {
      version: current,
      events: events.map((e) => stored.get(e.idempotencyKey!)!),
      appended: 0,
    };
  }
  checkExpectedVersion(streamId, expectedVersion, current);

  const ids = fresh.map((e) => e.id ?? newEventId());
  const staged = tx instanceof pg.Pool ? undefined : await stagedData(tx, ids, fresh);
  const data = staged ?? (await dataParameter(ids, fresh));
  const announcement = announceAppend(tx);
  const inserted = await tx.query<unknown[]>({
    text: `WITH inserted AS (
       INSERT INTO events (id, stream_id, stream_version, type, data, metadata, idempotency_key, occurred_at)
       SELECT e.id, $1, $2::bigint + e.ordinal, e.type,
              ${staged ? `coalesce(e.data, (SELECT s.data FROM ${STAGED_DATA} AS s WHERE s.id = e.id))` : "e.data"},
              e.metadata, e.key,
              coalesce(e.occurred_at, statement_timestamp())
         FROM unnest($3::uuid[], $4::text[], $5::jsonb[], $6::jsonb[], $7::text[], $8::timestamptz[])
              WITH ORDINALITY AS e(id, type, data, metadata, key, occurred_at, ordinal)
       RETURNING *
     ), stream AS (
       UPDATE streams SET version = $2::bigint + $9::bigint WHERE stream_id = $1
     ), notified AS (
       SELECT pg_notify('${EVENTS_CHANNEL}', '') WHERE $10::boolean
     )
     SELECT ${eventColumns("inserted", { dataUnless: "inserted.id = ANY($11::uuid[])" })}
       FROM inserted LEFT JOIN notified ON true
      ORDER BY ${logOrder("inserted")}`,
    values: [
      streamId,
      current,
      ids,
      fresh.map((e) => e.type),
      data.values,
      fresh.map((e) => JSON.stringify(e.metadata ?? {})),
      fresh.map((e) => e.idempotencyKey ?? null),
      fresh.map((e) => e.occurredAt?.toISOString() ?? null),
      fresh.length,
      announcement.inStatement,
      [...data.large.keys()],
    ],
    rowMode: "array",
  });
  announcement.stored();
  // Positions are drawn and the transaction is in flight: where a test stops a writer to
  // show that readers wait for it (test/store/concurrency.test.ts).
  await pausePoint("store.append.afterInsert", streamId);
  const recorded = inserted.rows.map((row) => withData(recordedEventAt(row), data.large));
  let next = 0;
  return {
    version: current + fresh.length,
    events: events.map((e) =>
      e.idempotencyKey !== undefined && stored.has(e.idempotencyKey)
        ? stored.get(e.idempotencyKey)!
        : recorded[next++]!,
    ),
    appended: fresh.length,
  };
}

/**
 * Where `stagedData` puts the large events' data: a temporary table of the transaction (not
 * written to the WAL, dropped at its end).
 */
const STAGED_DATA = "pg_temp.annal_staged_data";

/**
 * For an append in a transaction with a large event among `events` (`isLargeJson`): the large
 * ones' data sent ahead by COPY into a temporary table (`STAGED_DATA`), a chunk of its text at a
 * time with a turn of the event loop between (`copyStagedData`), and the array parameter of
 * the rest, with a SQL NULL for each large one, which the insert takes from the table.
 * Undefined when no event is large. Sent as one parameter, a change to a group of 100,000
 * members is 11 MB that pg copied into its message and wrote to the socket in one piece,
 * holding the loop some 10 ms. The large events' data is not read back, as `dataParameter`'s.
 */
async function stagedData(
  tx: Exclude<Queryable, pg.Pool>,
  ids: readonly string[],
  events: readonly NewEvent[],
): Promise<{ values: (string | null)[]; large: Map<string, unknown> } | undefined> {
  const large = new Map<string, unknown>();
  const values = events.map((event, i) => {
    if (!isLargeJson(event.data)) return JSON.stringify(event.data ?? null);
    large.set(ids[i]!, event.data);
    return null;
  });
  if (large.size === 0) return undefined;
  await tx.query(
    `CREATE TEMPORARY TABLE IF NOT EXISTS annal_staged_data (id uuid NOT NULL, data jsonb NOT NULL)
       ON COMMIT DROP`,
  );
  await copyStagedData(
    tx,
    STAGED_DATA,
    [...large].map(([id, value]) => ({ id, data: value })),
  );
  return { values, large };
}

/** PostgreSQL's type oid of jsonb, for a `jsonb[]` in binary format. */
const JSONB_OID = 3802;

/**
 * The events' data as the append's array parameter, and the large ones (`isLargeJson`) by
 * their ids (where they cannot be staged by COPY, `stagedData`: the caller gave a pool). Without a large one, the JSON texts (pg makes the array's literal). With one, the
 * array in PostgreSQL's binary format (a Buffer, which pg sends as binary), its texts made a
 * slice at a time: for a change to a group of 100,000 members, 11 MB of JSON made in one
 * piece, then escaped whole into the array's literal by pg, held the event loop for tens of
 * milliseconds each. The append then leaves the large events' data out of what it reads back
 * (`eventColumns`' `dataUnless`): the caller has it, and it was parsed again in one piece.
 */
async function dataParameter(
  ids: readonly string[],
  events: readonly NewEvent[],
): Promise<{ values: string[] | Buffer; large: Map<string, unknown> }> {
  const large = new Map<string, unknown>();
  events.forEach((event, i) => {
    if (isLargeJson(event.data)) large.set(ids[i]!, event.data);
  });
  if (large.size === 0) {
    return { values: events.map((e) => JSON.stringify(e.data ?? null)), large };
  }
  return { values: await runInSlices(jsonbArraySlices(events.map((e) => e.data))), large };
}

/**
 * A one-dimensional `jsonb[]` of `values` in PostgreSQL's binary format (array_send's): the
 * dimensions, the element type, then each element's length and its jsonb (a version byte and
 * the JSON text), a large value's text made a slice at a time (`jsonBytesSlices`).
 */
function* jsonbArraySlices(values: readonly unknown[]): Slices<Buffer> {
  const head = Buffer.alloc(20);
  head.writeInt32BE(1, 0); // dimensions
  head.writeInt32BE(0, 4); // no NULL elements
  head.writeInt32BE(JSONB_OID, 8);
  head.writeInt32BE(values.length, 12);
  head.writeInt32BE(1, 16); // the lower bound
  const parts: Buffer[] = [head];
  for (const value of values) {
    const text = isLargeJson(value)
      ? yield* jsonBytesSlices(value)
      : [Buffer.from(JSON.stringify(value ?? null) ?? "null", "utf8")];
    const prefix = Buffer.alloc(5);
    prefix.writeInt32BE(text.reduce((bytes, part) => bytes + part.length, 0) + 1, 0);
    prefix[4] = 1; // jsonb's binary format version
    parts.push(prefix, ...text);
  }
  return Buffer.concat(parts);
}

/** `event` with its data from `large` where the append left it out. */
function withData(event: RecordedEvent, large: ReadonlyMap<string, unknown>): RecordedEvent {
  return large.has(event.id) ? { ...event, data: large.get(event.id) } : event;
}

/** Throws WrongExpectedVersionError unless `actual` is what the appender expected. */
export function checkExpectedVersion(
  streamId: string,
  expected: ExpectedVersion,
  actual: number,
): void {
  const ok =
    expected === "any" ||
    (expected === "no_stream" && actual === 0) ||
    (expected === "exists" && actual > 0) ||
    expected === actual;
  if (!ok) throw new WrongExpectedVersionError(streamId, expected, actual);
}

async function storedByKey(
  tx: Queryable,
  events: readonly NewEvent[],
): Promise<Map<string, RecordedEvent>> {
  const keys = events.flatMap((e) => (e.idempotencyKey === undefined ? [] : [e.idempotencyKey]));
  if (keys.length === 0) return new Map();
  const found = await tx.query<unknown[]>({
    text: `SELECT ${eventColumns("e")} FROM events AS e WHERE e.idempotency_key = ANY($1::text[])`,
    values: [keys],
    rowMode: "array",
  });
  return new Map(
    found.rows.map((row) => {
      const event = recordedEventAt(row);
      return [event.idempotencyKey!, event];
    }),
  );
}

/**
 * How `appendInOneStatement` tells the expected version to SQL: its kind, and the number for
 * `"number"`.
 */
function expectedParams(expected: ExpectedVersion): [string, number] {
  return typeof expected === "number" ? ["number", expected] : [expected, 0];
}

/** Whether version `v` (an SQL expression) is what the appender expected ($8 kind, $9 number). */
const EXPECTED_HOLDS = (v: string) =>
  `($8::text = 'any' OR ($8::text = 'no_stream' AND ${v} = 0) OR ($8::text = 'exists' AND ${v} > 0)
    OR ($8::text = 'number' AND ${v} = $9::bigint))`;

/**
 * The one statement of an append (`appendInOneStatement`). Parameters: $1 the stream; $2 to
 * $7 one array each of ids, types, data, metadata, idempotency keys and occurrence times; $8
 * and $9 the expected version (`EXPECTED_HOLDS`); $10 whether it notifies in its own
 * transaction (`announceAppend`); $11 the ids of the large events, whose data it does not read
 * back (`dataParameter`).
 *
 * The stream's row is locked by its upsert, which checks the expected version against the row
 * as locked (the latest committed, not the statement's snapshot) and moves it on by the events
 * not already stored under their keys; the events are inserted at the versions that follow.
 * The stored originals of known keys come back with the new events.
 */
const APPEND_WITH_KEYS = `WITH input AS (
   SELECT e.* FROM unnest($2::uuid[], $3::text[], $4::jsonb[], $5::jsonb[], $6::text[], $7::timestamptz[])
          WITH ORDINALITY AS e(id, type, data, metadata, key, occurred_at, ordinal)
 ), known AS (
   SELECT k.* FROM events AS k WHERE k.idempotency_key = ANY($6::text[])
 ), fresh AS (
   SELECT i.*, row_number() OVER (ORDER BY i.ordinal) AS n FROM input AS i
    WHERE i.key IS NULL OR NOT EXISTS (SELECT 1 FROM known AS k WHERE k.idempotency_key = i.key)
 ), counted AS (
   SELECT count(*)::bigint AS fresh FROM fresh
 ), stream AS (
   INSERT INTO streams AS s (stream_id, version)
   SELECT $1, c.fresh FROM counted AS c
    WHERE ${EXPECTED_HOLDS("0")} OR EXISTS (SELECT 1 FROM streams AS o WHERE o.stream_id = $1)
   ON CONFLICT (stream_id) DO UPDATE
      SET version = s.version + (SELECT c.fresh FROM counted AS c), updated_at = now()
    WHERE (SELECT c.fresh FROM counted AS c) = 0 OR ${EXPECTED_HOLDS("s.version")}
   RETURNING s.version
 ), inserted AS (
   INSERT INTO events (id, stream_id, stream_version, type, data, metadata, idempotency_key, occurred_at)
   SELECT f.id, $1, st.version - c.fresh + f.n, f.type, f.data, f.metadata, f.key,
          coalesce(f.occurred_at, statement_timestamp())
     FROM fresh AS f, stream AS st, counted AS c
   RETURNING *
 ), notified AS (
   SELECT pg_notify('${EVENTS_CHANNEL}', '') WHERE $10::boolean AND EXISTS (SELECT 1 FROM inserted)
 ), recorded AS (
   SELECT 'inserted' AS origin,
          ${eventColumns("inserted", { dataUnless: "inserted.id = ANY($11::uuid[])" })}
     FROM inserted
   UNION ALL
   SELECT 'known' AS origin, ${eventColumns("known")} FROM known
 )
 SELECT st.version AS after_version, r.*
   FROM (SELECT 1) AS one
   LEFT JOIN stream AS st ON true
   LEFT JOIN recorded AS r ON true
   LEFT JOIN notified ON true`;

/**
 * The same statement for events without idempotency keys, the common case: with no key to
 * look up every event is fresh, and the statement is the stream's upsert and the insert
 * ($6 holds only nulls). It costs the server less to plan and run: one event per
 * transaction went from 0.75 to 0.87 times a raw INSERT in one run (bench/RESULTS.md).
 */
const APPEND_WITHOUT_KEYS = `WITH input AS (
   SELECT e.* FROM unnest($2::uuid[], $3::text[], $4::jsonb[], $5::jsonb[], $6::text[], $7::timestamptz[])
          WITH ORDINALITY AS e(id, type, data, metadata, key, occurred_at, n)
 ), stream AS (
   INSERT INTO streams AS s (stream_id, version)
   SELECT $1, cardinality($2::uuid[])
    WHERE ${EXPECTED_HOLDS("0")} OR EXISTS (SELECT 1 FROM streams AS o WHERE o.stream_id = $1)
   ON CONFLICT (stream_id) DO UPDATE
      SET version = s.version + cardinality($2::uuid[]), updated_at = now()
    WHERE ${EXPECTED_HOLDS("s.version")}
   RETURNING s.version
 ), inserted AS (
   INSERT INTO events (id, stream_id, stream_version, type, data, metadata, occurred_at)
   SELECT i.id, $1, st.version - cardinality($2::uuid[]) + i.n, i.type, i.data, i.metadata,
          coalesce(i.occurred_at, statement_timestamp())
     FROM input AS i, stream AS st
   RETURNING *
 ), notified AS (
   SELECT pg_notify('${EVENTS_CHANNEL}', '') WHERE $10::boolean AND EXISTS (SELECT 1 FROM inserted)
 )
 SELECT st.version AS after_version, 'inserted' AS origin,
        ${eventColumns("r", { dataUnless: "r.id = ANY($11::uuid[])" })}
   FROM (SELECT 1) AS one
   LEFT JOIN stream AS st ON true
   LEFT JOIN inserted AS r ON true
   LEFT JOIN notified ON true`;

/**
 * An append that is its own transaction, in one statement and so one round trip (see
 * `APPEND_WITH_KEYS`); the commit is the statement's own.
 *
 * Returns undefined, having written nothing, when the statement cannot decide alone: the
 * expected version does not hold on the locked row, or needs a stream its snapshot did not see.
 * The transaction path (`appendInTransaction`) then decides exactly, and throws what it must.
 * A key stored by a concurrent append after the snapshot stops the insert with a unique
 * violation, which the caller answers the same way.
 */
export async function appendInOneStatement(
  db: Queryable,
  streamId: string,
  events: readonly NewEvent[],
  expectedVersion: ExpectedVersion,
): Promise<AppendResult | undefined> {
  // A large event's data is staged by COPY, in a transaction (`appendInTransaction`).
  if (events.some((e) => isLargeJson(e.data))) return undefined;
  const [kind, number] = expectedParams(expectedVersion);
  const keyed = events.some((e) => e.idempotencyKey !== undefined);
  const ids = events.map((e) => e.id ?? newEventId());
  const data = await dataParameter(ids, events);
  const announcement = announceAppend(db);
  // Array rows: the stream's version after, the event's origin, then `eventColumns`.
  const result = await db.query<unknown[]>({
    // Prepared once per connection: planning these statements costs more than running them.
    ...(keyed
      ? { name: "annal-append-in-one-statement", text: APPEND_WITH_KEYS }
      : { name: "annal-append-without-keys", text: APPEND_WITHOUT_KEYS }),
    values: [
      streamId,
      ids,
      events.map((e) => e.type),
      data.values,
      events.map((e) => JSON.stringify(e.metadata ?? {})),
      events.map((e) => e.idempotencyKey ?? null),
      events.map((e) => e.occurredAt?.toISOString() ?? null),
      kind,
      number,
      announcement.inStatement,
      [...data.large.keys()],
    ],
    rowMode: "array",
  });
  const version = result.rows[0]?.[0] as number | null | undefined;
  if (version === null || version === undefined) return undefined;
  const recorded = (origin: string) =>
    result.rows
      .filter((row) => row[1] === origin)
      .map((row) => withData(recordedEventAt(row, 2), data.large));
  const inserted = recorded("inserted").sort((a, b) => a.streamVersion - b.streamVersion);
  if (inserted.length > 0) announcement.stored();
  const known = new Map(recorded("known").map((event) => [event.idempotencyKey!, event]));
  let next = 0;
  return {
    version: Number(version),
    events: events.map((e) =>
      e.idempotencyKey !== undefined && known.has(e.idempotencyKey)
        ? known.get(e.idempotencyKey)!
        : inserted[next++]!,
    ),
    appended: inserted.length,
  };
}
