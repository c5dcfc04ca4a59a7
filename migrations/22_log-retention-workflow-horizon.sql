-- The workflow instances' horizon a retention run used (`[retention.streams] workflow`, or
-- `keep`): instances that finished before it were folded into checkpoints, so their starts
-- and calls are no longer in the log. NULL: the run kept every instance whole. `annal
-- simulate` refuses a period that begins before the latest one (410 ANNAL_BEFORE_RETENTION).
ALTER TABLE log_retention ADD COLUMN workflow_horizon timestamptz;
