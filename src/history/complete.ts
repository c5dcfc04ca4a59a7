import type { Queryable } from "../db/index.ts";
import { readCheckpointOnPool, schemaNames } from "../projector/index.ts";
import { comparePositions, readHead, type LogPosition } from "../store/index.ts";

/** The projections, per database, that have once held the whole directory. */
const complete = new WeakMap<Queryable, Set<string>>();

/** The log's head when a reader first found capture's first import recorded, per database. */
const importHeads = new WeakMap<Queryable, LogPosition>();

/**
 * Whether `projection` (`entries`, `entry_versions`) holds the directory, given the position
 * it has `applied`: capture's first import is recorded and the projection has applied the log
 * up to the head as it was when a reader first found the import recorded (the import commits
 * with its checkpoint, so that head is past it). Until then (a first start, whose import or
 * its projection is still under way) an entry the directory has may be missing from it. The
 * head is not read again: on a log that never rests (writes all the time) the projection is
 * always a little behind the head, and would never be found complete. Once complete, it is
 * for the life of the process (a rebuild keeps the live tables until the new ones catch up).
 */
export async function holdsDirectoryAt(
  db: Queryable,
  projection: string,
  applied: LogPosition | undefined,
): Promise<boolean> {
  if (complete.get(db)?.has(projection)) return true;
  let importHead = importHeads.get(db);
  if (importHead === undefined) {
    const { rows } = await db.query<{ imported: boolean }>(
      "SELECT EXISTS (SELECT 1 FROM capture_checkpoints) AS imported",
    );
    if (!rows[0]!.imported) return false;
    importHead = await readHead(db);
    importHeads.set(db, importHead);
  }
  if (applied === undefined) return false;
  // In log order, by the store's helper: positions alone are not the log's order (a
  // transaction that began earlier may take later positions), and the projection's
  // checkpoint can lie past an event of a higher position already applied.
  if (comparePositions(importHead, applied) > 0) return false;
  let projections = complete.get(db);
  if (!projections) complete.set(db, (projections = new Set()));
  projections.add(projection);
  return true;
}

/**
 * `holdsDirectoryAt` with the position the projection's live checkpoint holds now.
 *
 * @example
 * if (!(await holdsDirectory(pool, "entry_versions"))) throw new HistoryBuildingError();
 */
export async function holdsDirectory(db: Queryable, projection: string): Promise<boolean> {
  if (complete.get(db)?.has(projection)) return true;
  const checkpoint = await readCheckpointOnPool(db, schemaNames(projection).live);
  return holdsDirectoryAt(
    db,
    projection,
    checkpoint && { transactionId: checkpoint.transactionId, position: checkpoint.position },
  );
}
