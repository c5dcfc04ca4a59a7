export { startEmbeddedPostgres } from "./embedded.ts";
export { databaseAddress, describeAddress, type DatabaseAddress } from "./address.ts";
export type { EmbeddedDatabase, EmbeddedOptions } from "./embedded.ts";
export {
  createPool,
  DEFAULT_CONNECTION_TIMEOUT_MS,
  onAvailability,
  pipelinedPool,
  settleAll,
  withPipelinedTransaction,
  withSessionLock,
  withTransaction,
} from "./pool.ts";
export type { Pool, PoolClient, Queryable } from "./pool.ts";
export {
  DatabaseBusyError,
  DatabaseUnreachableError,
  isDatabaseUnreachable,
  logLoopFailure,
} from "./errors.ts";
export { afterCommit } from "./after-commit.ts";
export { sideConnection } from "./side-connection.ts";
export { closeSessionLocks, trySessionLock, type SessionLock } from "./session-locks.ts";
export {
  MIGRATIONS_DIR,
  MigrationMismatchError,
  checkMigrations,
  keyOf,
  knownMigrations,
  migrateDatabase,
  recordedMigrations,
} from "./migrations.ts";
