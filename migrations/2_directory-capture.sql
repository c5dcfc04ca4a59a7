-- Where each change-capture source stands: the accesslog's last reqStart, the poll's last
-- modifyTimestamp, the last full reconciliation and snapshot. Written in the same transaction
-- as the events a capture run appends.
CREATE TABLE capture_checkpoints (
  source text PRIMARY KEY,
  position text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
