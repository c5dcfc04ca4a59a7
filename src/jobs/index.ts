/**
 * Background jobs on pg-boss, in annal's own database (schema `pgboss`). Used by the webhook's
 * change-event processing and by scheduled capture work.
 */
export {
  inTransaction,
  JOB_HEARTBEAT_SECONDS,
  JOB_MONITOR_INTERVAL_SECONDS,
  JOBS_SCHEMA,
  startJobs,
  type InTransactionOptions,
  type Jobs,
  type StartJobsOptions,
} from "./start.ts";
