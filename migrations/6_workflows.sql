-- The workflow engine's own tables. Instances, their steps and dialogs are projections of the
-- event log; these hold what the log should not: bundles (large, content-addressed) and the
-- wake-ups the engine owes instances (derived from their events, written in the same
-- transaction as the event that asks for them).

-- The database's clock as the engine reads it: the real clock plus an offset that a test
-- may move for its own database (the workflow test driver's advanceClock). Deadlines,
-- retries and timers are all evaluated through annal_now(), so every process agrees.
CREATE TABLE annal_clock (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  "offset" interval NOT NULL DEFAULT '0'
);
INSERT INTO annal_clock DEFAULT VALUES;

CREATE FUNCTION annal_now() RETURNS timestamptz
  LANGUAGE sql STABLE
  AS $$ SELECT clock_timestamp() + (SELECT "offset" FROM annal_clock) $$;

-- Every bundle a definition was deployed with, by its SHA-256: an instance runs from the
-- bundle its definition had when it started, for as long as it lives.
CREATE TABLE workflow_bundles (
  hash text PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'),
  bundle text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- When an instance must be woken: a step's retry, a deadline. The timer poller turns due rows
-- into wake-up jobs (and deletes them) in one transaction, many processes at once (SKIP LOCKED).
CREATE TABLE workflow_timers (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id uuid NOT NULL,
  due_at timestamptz NOT NULL,
  reason text NOT NULL
);
CREATE INDEX workflow_timers_due ON workflow_timers (due_at);
CREATE INDEX workflow_timers_instance ON workflow_timers (instance_id);
