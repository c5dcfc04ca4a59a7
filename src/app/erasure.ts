import { eraseEntry, ErasureEntryUnknownError, type Erasure } from "../audit/index.ts";
import type { AnnalConfig } from "../config/index.ts";
import type { Pool } from "../db/index.ts";
import { ENTRY_EVENT_TYPES } from "../events/index.ts";
import { entryUUIDForDn, UUID } from "../history/index.ts";
import { allProjections, replayProjection } from "./projections.ts";

export interface EraseFromLogOptions {
  /** The entry: its id (entryUUID) or a DN it had. */
  readonly entry: string;
  readonly reason: string;
  readonly attributes?: readonly string[];
  readonly onProgress?: (phase: string, done: number, total: number) => void;
}

/**
 * Erases one entry's values (`eraseEntry`: the log, with an `EntryErased` event), then rebuilds
 * every projection that holds entries' values from the redacted log, so that the values are
 * gone from every table: each is rebuilt side by side and swapped in, and the old tables are
 * dropped.
 */
export async function eraseFromLog(
  config: AnnalConfig,
  pool: Pool,
  options: EraseFromLogOptions,
): Promise<Erasure> {
  const entryUUID = UUID.test(options.entry)
    ? options.entry.toLowerCase()
    : await entryUUIDForDn(pool, options.entry, "ever");
  if (!entryUUID) throw new ErasureEntryUnknownError(options.entry);
  const erasure = await eraseEntry(pool, {
    entryUUID,
    reason: options.reason,
    ...(options.attributes ? { attributes: options.attributes } : {}),
  });
  const entryTypes = new Set<string>(ENTRY_EVENT_TYPES);
  for (const projection of allProjections(config)) {
    if (!projection.handles.some((type) => entryTypes.has(type))) continue;
    await replayProjection({
      pool,
      projection,
      onProgress: (done, total) => options.onProgress?.(projection.name, done, total),
    });
  }
  return erasure;
}
