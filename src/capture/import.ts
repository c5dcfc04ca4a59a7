import { randomUUID } from "node:crypto";
import { withTransaction } from "../db/index.ts";
import { appendToStreams } from "../store/index.ts";
import type { CaptureContext, CaptureResult } from "./context.ts";
import { ENTRY_EVENT, entryStream, type EntrySnapshot } from "../events/index.ts";
import { entryState } from "./normalize.ts";

export interface ImportOptions {
  /** `import`: the first one, or `annal import`; `periodic`: the scheduled snapshots. */
  readonly reason: "import" | "periodic";
  /** Called after every page with the entries done and the entries found in all. */
  readonly onProgress?: (done: number, total: number) => void;
  readonly pageSize?: number;
}

/**
 * A snapshot event for every entry under the directory base, page by page, each page one
 * transaction with a constant number of statements. Snapshots let a replay start from an
 * entry's latest state, and give capture the state that changes apply to.
 */
export async function importEntries(
  context: CaptureContext,
  options: ImportOptions,
): Promise<CaptureResult> {
  const { directory, normalizer, base } = context;
  const pageSize = options.pageSize ?? 500;
  const total = options.onProgress ? await countEntries(context) : 0;
  const run = randomUUID();
  let done = 0;
  let recorded = 0;
  options.onProgress?.(0, total);
  let writing: Promise<number> | undefined;
  for await (const page of directory.search(base, {
    scope: "sub",
    attributes: ["*", "+"],
    binaryAttributes: normalizer.schema.binaryAttributes(),
    pageSize,
  })) {
    const now = new Date();
    const appends = page.flatMap((entry) => {
      const state = entryState(normalizer, entry);
      const entryUUID = state.operational.entryUUID?.[0]?.toLowerCase();
      if (!entryUUID) return [];
      const snapshot: EntrySnapshot = { entryUUID, reason: options.reason, state };
      return [
        {
          streamId: entryStream(entryUUID),
          events: [
            {
              type: ENTRY_EVENT.snapshot,
              data: snapshot,
              occurredAt: now,
              metadata: { source: options.reason },
              idempotencyKey: `${options.reason}:${run}:${entryUUID}`,
            },
          ],
        },
      ];
    });
    // One page is written while the next is read and prepared; pages are written one after
    // another, in the directory's order.
    if (writing) {
      recorded += await writing;
      options.onProgress?.(done, Math.max(total, done));
    }
    writing = withTransaction(context.pool, (tx) => appendToStreams(tx, appends));
    writing.catch(() => {}); // awaited above or below; not unhandled while a page is read
    done += page.length;
  }
  if (writing) recorded += await writing;
  options.onProgress?.(done, Math.max(total, done));
  return { recorded };
}

/** How many entries lie under the base (identifiers only: cheap). */
export async function countEntries(context: CaptureContext): Promise<number> {
  let count = 0;
  for await (const page of context.directory.search(context.base, {
    scope: "sub",
    attributes: ["1.1"],
    pageSize: 1000,
  })) {
    count += page.length;
  }
  return count;
}
