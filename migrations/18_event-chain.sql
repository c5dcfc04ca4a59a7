-- The hash chain over the event log (src/audit/chain/): one row per event, written by the one
-- chainer, which walks the log in log order below its safe bound. Kept beside `events`, not in
-- it: appends stay as they were, and the chain does not care how `events` is stored.
-- `hash` = sha256(prev_hash || sha256(the event's content)); the first event's prev_hash is 32
-- zero bytes. `transaction_id` and `position` are the event's, so the chain reads in log order.
CREATE TABLE event_chain (
  position bigint PRIMARY KEY,
  transaction_id xid8 NOT NULL,
  hash bytea NOT NULL CHECK (length(hash) = 32),
  prev_hash bytea NOT NULL CHECK (length(prev_hash) = 32),
  chained_at timestamptz NOT NULL DEFAULT statement_timestamp()
);

CREATE INDEX event_chain_log_order ON event_chain (transaction_id, position);
