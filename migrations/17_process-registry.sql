-- Every annal process attached to this database, so that `annal status` reads who runs rather
-- than guessing: each start inserts its row, refreshes last_seen_at periodically and deletes
-- the row at a clean shutdown. A row not seen for a while belongs to a process that died; the
-- others prune it after a longer while.
CREATE TABLE annal_processes (
  id uuid PRIMARY KEY,
  parts text[] NOT NULL,
  host text NOT NULL,
  pid integer NOT NULL,
  version text NOT NULL,
  url text,
  started_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX annal_processes_last_seen ON annal_processes (last_seen_at);
