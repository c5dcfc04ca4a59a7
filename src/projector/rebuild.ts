import { withTransaction, type Pool } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import { START, countAfter } from "../store/index.ts";
import { applyBatch, flushStreamVersions, lockProjection, streamVersions } from "./apply-batch.ts";
import { createProjectionSchema, quoteIdentifier, schemaExists, schemaNames } from "./schema.ts";
import type { AnyProjection } from "./types.ts";

export interface RebuildOptions {
  readonly pool: Pool;
  readonly projection: AnyProjection;
  /** Called after every batch with the events done and the events to do in all. */
  readonly onProgress?: (done: number, total: number) => void;
  readonly batchSize?: number;
}

/**
 * Rebuilds a projection side by side: replays the whole log into a shadow schema while the
 * live tables keep serving reads (and keep being updated by a running projector), then, under
 * the projection's lock, applies what arrived meanwhile and swaps the shadow in by renaming
 * schemas in one transaction. Readers see the old tables or the new ones, never a mix.
 */
export async function rebuildProjection(options: RebuildOptions): Promise<void> {
  const { pool, projection } = options;
  const batchSize = options.batchSize ?? 2000;
  const names = schemaNames(projection.name);
  const guard = await pool.connect();
  try {
    // One rebuild of a projection at a time, across processes.
    const locked = await guard.query<{ ok: boolean }>(
      "SELECT pg_try_advisory_lock(hashtext($1)) AS ok",
      [`annal-rebuild:${projection.name}`],
    );
    if (!locked.rows[0]?.ok) {
      throw new AnnalError(
        "ANNAL_REPLAY_IN_PROGRESS",
        `projection ${projection.name} is already being rebuilt by another process`,
        { status: 409, hint: "wait for that rebuild to finish" },
      );
    }
    await withTransaction(pool, async (tx) => {
      await tx.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(names.shadow)} CASCADE`);
      await tx.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(names.old)} CASCADE`);
      await createProjectionSchema(tx, names.shadow, projection);
    });

    const total = await countAfter(pool, START);
    let done = 0;
    options.onProgress?.(done, total);
    // The shadow is new and only this rebuild writes it: its streams' versions stay in
    // memory and are written once, before the swap. A rebuild that dies leaves a shadow the
    // next one drops.
    const streams = streamVersions();
    for (;;) {
      const applied = await withTransaction(pool, async (tx) => {
        await lockProjection(tx, names.shadow);
        return applyBatch(tx, projection, names.shadow, batchSize, streams);
      });
      done += applied;
      options.onProgress?.(done, Math.max(total, done));
      if (applied < batchSize) break;
    }

    await withTransaction(pool, async (tx) => {
      // Stop the live projector between two of its batches, catch the shadow up to the very
      // end of the log, and swap.
      await lockProjection(tx, names.live);
      let applied: number;
      do {
        applied = await applyBatch(tx, projection, names.shadow, batchSize, streams);
        done += applied;
      } while (applied === batchSize);
      await flushStreamVersions(tx, names.shadow, streams);
      if (await schemaExists(tx, names.live)) {
        await tx.query(
          `ALTER SCHEMA ${quoteIdentifier(names.live)} RENAME TO ${quoteIdentifier(names.old)}`,
        );
      }
      await tx.query(
        `ALTER SCHEMA ${quoteIdentifier(names.shadow)} RENAME TO ${quoteIdentifier(names.live)}`,
      );
    });
    options.onProgress?.(done, done);
    // Dropping waits for readers still on the old tables; it is outside the swap so that the
    // swap itself stays short.
    await pool.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(names.old)} CASCADE`);
  } finally {
    await guard.query("SELECT pg_advisory_unlock(hashtext($1))", [
      `annal-rebuild:${projection.name}`,
    ]);
    guard.release();
  }
}
