-- annal's pg-boss queues made before every queue had a heartbeat get one (10 s, as
-- JOB_HEARTBEAT_SECONDS in src/jobs/start.ts; new queues are created with it): a job of a
-- SIGKILLed worker is then failed and retried within seconds instead of at its expiry, and a
-- subject's later jobs do not wait behind it. Nothing to do on a database without pg-boss yet.
DO $$
BEGIN
  IF EXISTS (
    SELECT 1 FROM information_schema.columns
     WHERE table_schema = 'pgboss' AND table_name = 'queue' AND column_name = 'heartbeat_seconds'
  ) THEN
    UPDATE pgboss.queue SET heartbeat_seconds = 10 WHERE heartbeat_seconds IS NULL;
  END IF;
END
$$;
