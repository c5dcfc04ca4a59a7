-- The event store: an append-only log of events in streams, read in a safe global order.

-- One row: this database's identity. Cursors carry a digest of it (with the cluster's system
-- identifier) so that a cursor from another database, or from a restored copy, is refused.
CREATE TABLE annal_database (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  epoch uuid NOT NULL DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO annal_database DEFAULT VALUES;

-- One row per stream: its current version, and the row an append locks so that appends to
-- one stream are serialised (optimistic concurrency is checked under that lock).
CREATE TABLE streams (
  stream_id text PRIMARY KEY,
  version bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE events (
  position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The appending transaction. Readers order by (transaction_id, position) and never read
  -- at or past the oldest transaction still in flight: positions are taken at insert time
  -- and commit in any order, transaction ids bound what can still appear.
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  id uuid NOT NULL UNIQUE,
  stream_id text NOT NULL,
  stream_version bigint NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  idempotency_key text UNIQUE,
  occurred_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT statement_timestamp(),
  UNIQUE (stream_id, stream_version)
);

CREATE INDEX events_global_order ON events (transaction_id, position);
