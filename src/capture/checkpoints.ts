import { AnnalError } from "../errors/index.ts";
import type { Queryable } from "../db/index.ts";

/** Names of capture checkpoints in `capture_checkpoints`. */
export type CheckpointName = "accesslog" | "changelog" | "ad" | "poll" | "reconcile" | "snapshot";

export async function readCaptureCheckpoint(
  db: Queryable,
  name: CheckpointName,
  options: { lock?: boolean } = {},
): Promise<string | undefined> {
  const result = await db.query<{ position: string }>(
    `SELECT position FROM capture_checkpoints WHERE source = $1${options.lock ? " FOR UPDATE" : ""}`,
    [name],
  );
  return result.rows[0]?.position;
}

export async function writeCaptureCheckpoint(
  db: Queryable,
  name: CheckpointName,
  position: string,
): Promise<void> {
  await db.query(
    `INSERT INTO capture_checkpoints (source, position) VALUES ($1, $2)
     ON CONFLICT (source) DO UPDATE SET position = EXCLUDED.position, updated_at = now()`,
    [name, position],
  );
}

/** Capture from `source` was asked for before the directory was ever imported. */
export function notImported(source: string): AnnalError {
  return new AnnalError(
    "ANNAL_CAPTURE_NOT_IMPORTED",
    `${source} capture has no checkpoint: the directory has not been imported yet`,
  );
}
