export { startEmbeddedPostgres } from "./embedded.ts";
export type { EmbeddedDatabase, EmbeddedOptions } from "./embedded.ts";
export {
  createPool,
  pipelinedPool,
  settleAll,
  withPipelinedTransaction,
  withSessionLock,
  withTransaction,
} from "./pool.ts";
export type { Pool, PoolClient, Queryable } from "./pool.ts";
export {
  MIGRATIONS_DIR,
  MigrationMismatchError,
  checkMigrations,
  keyOf,
  knownMigrations,
  migrateDatabase,
  recordedMigrations,
} from "./migrations.ts";
