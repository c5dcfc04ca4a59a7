/**
 * What operators run: the process registry (heartbeats), `status`, `stop`, `logs`, and the
 * preflight checks `annal start` makes before anything starts.
 */
export {
  annalVersion,
  GONE_AFTER_MS,
  HEARTBEAT_MS,
  listProcesses,
  PRUNE_AFTER_MS,
  registerProcess,
  type ProcessRow,
  type RegisteredProcess,
} from "./registry.ts";
export { readStatus, type AnnalStatus, type QueueDepth } from "./status.ts";
export {
  isRunningNode,
  logFilePath,
  pidFilePath,
  readPidFile,
  writePidFile,
  type PidFile,
} from "./pid-file.ts";
export { NotRunningError, stopAnnal, StopTimeoutError } from "./stop.ts";
export { readLogs } from "./logs.ts";
export { checkPortFree, PortInUseError, portOwner, type PortOwner } from "./port.ts";
export {
  checkPostgresVersion,
  checkPostgresVersionNumber,
  OLDEST_POSTGRES_MAJOR,
  PostgresVersionError,
} from "./postgres-version.ts";
