-- The event table partitioned by position range (docs/architecture.md, "The log at scale"), so
-- that the log grows to 10^8 events with appends, look-ups and feed pages staying flat: an
-- append touches the newest partition's indexes only, each partition's indexes stay a bounded
-- size, and retention can drop a whole partition. Existing events move into the partitions.

-- How wide a partition is and how many empty partitions are kept ready beyond the one that
-- holds the newest position. A change applies to partitions made after it.
CREATE TABLE event_partitioning (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  width bigint NOT NULL CHECK (width > 0),
  ahead integer NOT NULL CHECK (ahead > 0)
);
INSERT INTO event_partitioning (width, ahead) VALUES (10000000, 2);

-- Every partition made, by the positions it holds (lower inclusive, upper exclusive).
CREATE TABLE event_partitions (
  name text PRIMARY KEY,
  lower_position bigint NOT NULL UNIQUE,
  upper_position bigint NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Idempotency keys are unique across the whole log, which a partitioned table's own unique
-- index cannot say (it must include the partition key). The key's row is written by a
-- trigger in the appending statement, so a second append of a key fails on this primary key
-- exactly as it failed on `events_idempotency_key_key` before, and is answered the same way.
CREATE TABLE event_idempotency_keys (
  idempotency_key text PRIMARY KEY,
  position bigint NOT NULL
);

ALTER TABLE events RENAME TO events_unpartitioned;

CREATE TABLE events (
  position bigint GENERATED ALWAYS AS IDENTITY,
  -- The appending transaction (see 1_event-store.sql): readers order by (transaction_id,
  -- position) and never read at or past the oldest transaction still in flight.
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  id uuid NOT NULL,
  stream_id text NOT NULL,
  stream_version bigint NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  idempotency_key text,
  occurred_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT statement_timestamp()
) PARTITION BY RANGE (position);

/*
 * Makes partitions until those ready reach `ahead` widths beyond `through` or the newest
 * position drawn, whichever is higher; returns the first position no partition holds yet.
 * Run at start, by an appender that has entered the last ready partition, and by
 * maintenance; concurrent callers are serialised by an advisory lock, so two never make the
 * same partition.
 *
 * A partition is made as a table of its own with its indexes and then attached: ATTACH
 * takes a lock on `events` that appends and reads do not wait for (CREATE TABLE … PARTITION
 * OF would stop both). Within a partition, event ids and (stream, version) are unique; across
 * partitions, ids are UUIDv7s made at append and versions are drawn under the stream's row
 * lock (src/store/append.ts), so a repeat cannot arise there.
 */
CREATE FUNCTION annal_event_partitions_ensure(through bigint DEFAULT 0) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  part_width bigint;
  part_ahead integer;
  reached bigint;
  target bigint;
  lower_bound bigint;
  part text;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('annal.event_partitions'));
  SELECT p.width, p.ahead INTO part_width, part_ahead FROM event_partitioning AS p;
  SELECT coalesce(max(p.upper_position), 0) INTO reached FROM event_partitions AS p;
  target := greatest(
    through,
    coalesce(pg_sequence_last_value(pg_get_serial_sequence('events', 'position')::regclass), 0)
  ) + part_width * part_ahead;
  WHILE reached <= target LOOP
    lower_bound := reached;
    part := format('events_from_%s', lower_bound);
    EXECUTE format('CREATE TABLE %I (LIKE events)', part);
    EXECUTE format('CREATE UNIQUE INDEX %I ON %I (id)', part || '_id_key', part);
    EXECUTE format('CREATE UNIQUE INDEX %I ON %I (stream_id, stream_version)',
                   part || '_stream_version_key', part);
    EXECUTE format('ALTER TABLE events ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)',
                   part, lower_bound, lower_bound + part_width);
    INSERT INTO event_partitions (name, lower_position, upper_position)
      VALUES (part, lower_bound, lower_bound + part_width);
    reached := lower_bound + part_width;
  END LOOP;
  RETURN reached;
END
$$;

SELECT annal_event_partitions_ensure((SELECT coalesce(max(position), 0) FROM events_unpartitioned));

INSERT INTO events OVERRIDING SYSTEM VALUE
  SELECT position, transaction_id, id, stream_id, stream_version, type, data, metadata,
         idempotency_key, occurred_at, recorded_at
    FROM events_unpartitioned;
INSERT INTO event_idempotency_keys (idempotency_key, position)
  SELECT idempotency_key, position FROM events_unpartitioned WHERE idempotency_key IS NOT NULL;
SELECT setval(pg_get_serial_sequence('events', 'position'), max(position))
  FROM events_unpartitioned HAVING max(position) IS NOT NULL;

DROP TABLE events_unpartitioned;

ALTER TABLE events ADD PRIMARY KEY (position);
CREATE INDEX events_global_order ON events (transaction_id, position);
-- Look-ups by key (an append's repeat check, the webhook's) read each partition's index.
CREATE INDEX events_idempotency_key ON events (idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE FUNCTION annal_event_idempotency_key() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_idempotency_keys (idempotency_key, position)
    VALUES (NEW.idempotency_key, NEW.position);
  RETURN NULL;
END
$$;

CREATE TRIGGER events_idempotency_key_unique
  AFTER INSERT ON events
  FOR EACH ROW WHEN (NEW.idempotency_key IS NOT NULL)
  EXECUTE FUNCTION annal_event_idempotency_key();

-- As before (9_log-readers.sql): a log reader's transaction may not append.
CREATE TRIGGER events_refuse_log_readers
  BEFORE INSERT ON events
  FOR EACH STATEMENT EXECUTE FUNCTION annal_refuse_append_by_log_reader();
