import path from "node:path";
import { loadMigrationFiles, migrate } from "postgres-migrations";
import { AnnalError } from "../errors/index.ts";
import type { Pool, Queryable } from "./pool.ts";
import { PACKAGE_ROOT } from "../package-root.ts";

export const MIGRATIONS_DIR = path.resolve(PACKAGE_ROOT, "migrations");

export interface MigrationKey {
  readonly id: number;
  readonly name: string;
  readonly hash: string;
}

/** `3_add-tokens`: how a migration is named in messages. */
export const keyOf = (migration: { id: number; name: string }): string =>
  `${migration.id}_${migration.name}`;

/**
 * The database records a migration this program does not know, or its history has a gap:
 * it was migrated by a newer or an incompatible program. Nothing is changed.
 */
export class MigrationMismatchError extends AnnalError {
  readonly recordedKey: string;
  readonly newestKnownKey: string;

  constructor(reason: string, recordedKey: string, newestKnownKey: string) {
    super(
      "WF_DATABASE_MIGRATION_MISMATCH",
      `${reason}; the database records migration ${recordedKey}, the newest this program knows is ${newestKnownKey}`,
      {
        hint: "start the program version that migrated the database, or restore a backup from before the upgrade",
      },
    );
    this.recordedKey = recordedKey;
    this.newestKnownKey = newestKnownKey;
  }
}

export async function knownMigrations(dir = MIGRATIONS_DIR): Promise<MigrationKey[]> {
  return (await loadMigrationFiles(dir)).map(({ id, name, hash }) => ({ id, name, hash }));
}

export async function recordedMigrations(db: Queryable): Promise<MigrationKey[] | undefined> {
  const exists = await db.query<{ exists: boolean }>(
    "SELECT to_regclass('public.migrations') IS NOT NULL AS exists",
  );
  if (!exists.rows[0]?.exists) return undefined;
  const rows = await db.query<MigrationKey>("SELECT id, name, hash FROM migrations ORDER BY id");
  return rows.rows;
}

/**
 * Compares what the database records with what this program ships. A fresh database, or one
 * that is merely behind, passes; anything else raises `MigrationMismatchError`.
 */
export async function checkMigrations(
  db: Queryable,
  dir = MIGRATIONS_DIR,
): Promise<{ pending: number }> {
  const known = await knownMigrations(dir);
  const recorded = await recordedMigrations(db);
  const newest = known.at(-1);
  const newestKnownKey = newest ? keyOf(newest) : "none";
  if (!recorded) return { pending: known.length };
  const lastRecorded = recorded.at(-1);
  const recordedKey = lastRecorded ? keyOf(lastRecorded) : "none";
  for (const [index, migration] of recorded.entries()) {
    if (migration.id !== index) {
      throw new MigrationMismatchError(
        `the migration history has a gap before ${keyOf(migration)}`,
        recordedKey,
        newestKnownKey,
      );
    }
    const ours = known[index];
    if (!ours || ours.name !== migration.name || ours.hash !== migration.hash) {
      throw new MigrationMismatchError(
        `the database records migration ${keyOf(migration)}, which this program does not know`,
        recordedKey,
        newestKnownKey,
      );
    }
  }
  return { pending: known.length - recorded.length };
}

/** Checks, then applies the pending migrations (postgres-migrations holds an advisory lock). */
export async function migrateDatabase(pool: Pool, dir = MIGRATIONS_DIR): Promise<void> {
  const { pending } = await checkMigrations(pool, dir);
  if (pending === 0) return;
  await migrate({ client: pool }, dir);
}
