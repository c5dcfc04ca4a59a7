import { withTransaction, type PoolClient } from "../db/index.ts";
import { pausePoint } from "../pause-points.ts";
import {
  appendMark,
  appendToStreams,
  ensureEventPartitions,
  type StreamAppend,
} from "../store/index.ts";
import type { DirectoryEntry } from "../directory/index.ts";
import type { CaptureContext, CaptureResult } from "./context.ts";
import { ENTRY_EVENT, entryStream, type EntrySnapshot } from "../events/index.ts";
import { entryState, entryStateSlices, stateIdentity, type Normalizer } from "./normalize.ts";
import { runInSlices, SLICE_VALUES } from "../slices.ts";
import { identityAttributes } from "../directory/index.ts";
import { checkImportStored } from "./preflight.ts";

/**
 * Values one write of an import holds at most (`ImportOptions.valuesPerWrite`), unless a
 * single entry holds more. A page of 500 people holds some 15,000 values and is written
 * whole; a page with a group of many members is cut before and after the group.
 */
const DEFAULT_VALUES_PER_WRITE = 50_000;

export interface ImportOptions {
  /** `import`: the first one, or `annal import`; `periodic`: the scheduled snapshots. */
  readonly reason: "import" | "periodic";
  /** Called after every page with the entries done and the entries found in all. */
  readonly onProgress?: (done: number, total: number) => void;
  readonly pageSize?: number;
  /**
   * Values (over every attribute of its entries) one write holds at most; a page is cut into
   * writes of at most this many, an entry that holds more written alone. Default: the
   * context's, else `DEFAULT_VALUES_PER_WRITE`.
   */
  readonly valuesPerWrite?: number;
  /**
   * How many pages are written at once, each in a transaction of its own; one unless given.
   * `annal import` writes two: one page's statements keep one PostgreSQL backend busy, and a
   * single writer leaves Node waiting 42% of an import. The first start and the periodic
   * snapshots write one: every snapshot passes through each projection, which bounds the
   * first start however fast the import writes (and two writers raised its memory peak by
   * some 30 MiB), and periodic snapshots written faster than the projections apply them
   * held fresh changes back for seconds (bench/RESULTS.md, capture).
   */
  readonly writers?: number;
  /** Stops the import between pages, which then throws the signal's reason. */
  readonly signal?: AbortSignal;
  /** Awaited before each page is written: what holds the pass back (`paceByProjections`). */
  readonly pace?: () => Promise<void>;
  /**
   * Write every page in this open transaction instead of one transaction per page (`writers`
   * is then one): the first start's, so that the import lands in the log whole, with capture's
   * checkpoint, and the projections meet it as one run of first snapshots to build in bulk
   * (`applyFirstSnapshotsInBulk`). A failed import then leaves nothing behind either.
   */
  readonly transaction?: PoolClient;
  /** Where the import's wall time went, added to (milliseconds; see `ImportTimings`). */
  readonly timings?: ImportTimings;
}

/** What an import did: its events, and the values each of its writes held. */
export interface ImportResult extends CaptureResult {
  /** Per write (an `appendToStreams` of some of a page's entries), the values it held. */
  readonly writes: readonly number[];
}

/**
 * An import's wall time by what it waited on, in milliseconds. Pages are written while the
 * next one is read, so each part counts only the time the import spent waiting on it: they
 * add up to about the whole import.
 */
export interface ImportTimings {
  /** Waiting for the directory's next page. */
  read: number;
  /** Turning entries into snapshot events (`entryState`). */
  normalise: number;
  /** Waiting for pages to be written (the COPY into the log, and the streams' versions). */
  write: number;
}

/** A fresh `ImportTimings`. */
export const importTimings = (): ImportTimings => ({ read: 0, normalise: 0, write: 0 });

/**
 * A snapshot event for every entry under the directory base, page by page, each page cut
 * into writes of at most `valuesPerWrite` values (`valueBoundBatches`), each write one
 * transaction (or one part of the caller's) with a constant number of statements. Snapshots let a replay start from an
 * entry's latest state, and give capture the state that changes apply to.
 *
 * Snapshots carry no idempotency key: the directory gives a read no identity of its own, and
 * a key made up per run would never meet a stored one, while costing a look-up per page and
 * an entry in the keys' unique index per snapshot. Two imports record two snapshots each.
 *
 * Capture's passes go on meanwhile. An entry whose stream had an event appended since the
 * import began gets no snapshot: that event may describe a change made after this import
 * read the entry, and a snapshot appended after it would take the entry back. The change's
 * own event already holds what is newer.
 */
export async function importEntries(
  context: CaptureContext,
  options: ImportOptions,
): Promise<ImportResult> {
  const { directory, normalizer, base } = context;
  const pageSize = options.pageSize ?? 500;
  const valuesPerWrite = Math.max(
    1,
    options.valuesPerWrite ?? context.valuesPerWrite ?? DEFAULT_VALUES_PER_WRITE,
  );
  const writers = options.transaction ? 1 : Math.max(1, options.writers ?? 1);
  const timings = options.timings ?? importTimings();
  /** `work`'s wall time, added to `timings[part]`. */
  const timed = async <T>(part: keyof ImportTimings, work: Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await work;
    } finally {
      timings[part] += performance.now() - started;
    }
  };
  const total = options.onProgress ? await countEntries(context) : 0;
  // Before the first read: anything appended after this may be newer than what is read.
  const mark = await appendMark(context.pool);
  // Pages are bulk appends in transactions of their own, which make no partitions (an
  // appender's `EventPartitions` does): the partitions for all of them are made before the
  // first, beyond the entries counted when they were.
  await ensureEventPartitions(context.pool, mark.position + total);
  let done = 0;
  let recorded = 0;
  let read = 0;
  let unidentified = 0;
  const unidentifiedExamples: string[] = [];
  const writes: number[] = [];
  options.onProgress?.(0, total);
  /** Pages being written, oldest first. */
  const writing: Promise<number>[] = [];
  try {
    /** Since when the loop has been waiting for the directory's next page. */
    let reading = performance.now();
    for await (const page of directory.search(base, {
      scope: "sub",
      attributes: ["*", "+", ...identityAttributes(normalizer.identity)],
      binaryAttributes: normalizer.schema.binaryAttributes(),
      pageSize,
    })) {
      timings.read += performance.now() - reading;
      for (const batch of valueBoundBatches(page, valuesPerWrite)) {
        const normalising = performance.now();
        const appends = await snapshotAppends(normalizer, batch.entries, options.reason, (dn) => {
          unidentified++;
          if (unidentifiedExamples.length < 3) unidentifiedExamples.push(dn);
        });
        timings.normalise += performance.now() - normalising;
        read += batch.entries.length;
        // Batches are written while the next is prepared and read, `writers` at a time. No
        // two batches hold the same entry, so their locks never meet.
        if (writing.length === writers) {
          recorded += await timed("write", writing.shift()!);
          options.onProgress?.(done, Math.max(total, done));
        }
        await pausePoint("capture.import.pageRead", options.reason);
        await options.pace?.();
        if (options.signal?.aborted) break;
        const written = options.transaction
          ? appendToStreams(options.transaction, appends, { unmovedSince: mark })
          : withTransaction(context.pool, (tx) =>
              appendToStreams(tx, appends, { unmovedSince: mark }),
            );
        written.catch(() => {}); // awaited above or below; not unhandled while a page is read
        writing.push(written);
        writes.push(batch.values);
        done += batch.entries.length;
      }
      if (options.signal?.aborted) break;
      reading = performance.now();
    }
    while (writing.length > 0) recorded += await timed("write", writing.shift()!);
  } catch (error) {
    await Promise.allSettled(writing); // no transaction left behind
    throw error;
  }
  options.signal?.throwIfAborted();
  checkImportStored(
    context,
    options.reason,
    { entries: read, stored: read - unidentified, unidentified },
    unidentifiedExamples,
  );
  options.onProgress?.(done, Math.max(total, done));
  return { recorded, writes };
}

/**
 * Snapshot appends of `entries`, one stream each; an entry without an identity
 * (`stateIdentity`) has none, and is told to `unidentified`.
 */
async function snapshotAppends(
  normalizer: Normalizer,
  entries: readonly DirectoryEntry[],
  reason: ImportOptions["reason"],
  unidentified: (dn: string) => void,
): Promise<StreamAppend[]> {
  const now = new Date();
  const appends: StreamAppend[] = [];
  for (const entry of entries) {
    // An entry of many values (a large group) is normalised a slice at a time.
    const state =
      entryValueCount(entry) > SLICE_VALUES
        ? await runInSlices(entryStateSlices(normalizer, entry))
        : entryState(normalizer, entry);
    const entryUUID = stateIdentity(normalizer, state);
    if (!entryUUID) {
      unidentified(entry.dn);
      continue;
    }
    const snapshot: EntrySnapshot = { entryUUID, reason, state };
    appends.push({
      streamId: entryStream(entryUUID),
      events: [
        {
          type: ENTRY_EVENT.snapshot,
          data: snapshot,
          occurredAt: now,
          metadata: { source: reason },
        },
      ],
    });
  }
  return appends;
}

/** How many values an entry holds, over all its attributes. */
function entryValueCount(entry: DirectoryEntry): number {
  let values = 0;
  for (const name in entry.attributes) values += entry.attributes[name]!.length;
  return values;
}

/**
 * A page cut into runs of entries that hold at most `bound` values between them; an entry
 * that alone holds more is a run of its own. What one write holds at once is then bound by
 * values, not entries: a page of 500 people holds some 15,000, a page with a group of 400,000
 * members would otherwise hold its 499 neighbours' too, normalised, as JSON and as COPY.
 */
function* valueBoundBatches(
  page: readonly DirectoryEntry[],
  bound: number,
): Generator<{ entries: DirectoryEntry[]; values: number }> {
  let entries: DirectoryEntry[] = [];
  let values = 0;
  for (const entry of page) {
    const count = entryValueCount(entry);
    if (entries.length > 0 && values + count > bound) {
      yield { entries, values };
      entries = [];
      values = 0;
    }
    entries.push(entry);
    values += count;
  }
  if (entries.length > 0) yield { entries, values };
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
