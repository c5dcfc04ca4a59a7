-- Retention (src/audit/retention/): one row per run that removed events. The newest row's
-- horizon is the earliest moment `at` answers are served for (before it: 410
-- ANNAL_BEFORE_RETENTION). The run's own event (`LogRetained`, stream `log-retention`) holds
-- the same facts inside the hash chain; this table is what readers of the horizon look up.
CREATE TABLE log_retention (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  horizon timestamptz NOT NULL,
  -- The first event kept in the chain, in log order: every event before it is a checkpoint or
  -- an event of a kind retention keeps whole.
  cut_position bigint NOT NULL,
  cut_transaction_id xid8 NOT NULL,
  -- The chain's last link before the cut, which the first kept link follows.
  head_position bigint NOT NULL,
  head_hash bytea NOT NULL,
  streams_folded bigint NOT NULL,
  events_removed bigint NOT NULL,
  ran_at timestamptz NOT NULL DEFAULT statement_timestamp()
);
