import type { Queryable } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";

/**
 * The oldest PostgreSQL annal runs on. What annal itself uses needs 13 (`xid8`,
 * `pg_current_xact_id`, `pg_snapshot_xmin`; pg-boss 12 needs 13 too); 13 and 14 are past
 * their community end of life (November 2025, November 2026), so annal neither tests on them
 * nor accepts them.
 */
export const OLDEST_POSTGRES_MAJOR = 15;

/** The PostgreSQL server is older than annal supports. */
export class PostgresVersionError extends AnnalError {
  constructor(version: string) {
    super(
      "ANNAL_POSTGRES_VERSION_TOO_OLD",
      `annal needs PostgreSQL ${OLDEST_POSTGRES_MAJOR} or newer; the server is ${version}`,
      {
        hint: `upgrade the server (pg_upgrade), or leave [database] url out to run annal's embedded PostgreSQL`,
      },
    );
  }
}

/** `server_version_num` (150004) against the oldest supported major; throws when older. */
export function checkPostgresVersionNumber(versionNum: number, version: string): void {
  if (!(Math.floor(versionNum / 10_000) >= OLDEST_POSTGRES_MAJOR)) {
    throw new PostgresVersionError(version);
  }
}

/**
 * Preflight: the server's version, read before migrations run (an older server would fail
 * them halfway with a syntax error).
 *
 * @throws PostgresVersionError `ANNAL_POSTGRES_VERSION_TOO_OLD`.
 */
export async function checkPostgresVersion(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ num: string; version: string }>(
    "SELECT current_setting('server_version_num') AS num, current_setting('server_version') AS version",
  );
  const row = rows[0]!;
  checkPostgresVersionNumber(Number(row.num), row.version);
  return row.version;
}
