import { withSessionLock, withTransaction } from "../db/index.ts";
import { pausePoint } from "../pause-points.ts";
import {
  WrongExpectedVersionError,
  appendMark,
  type AppendMark,
  type AppendResult,
  type LogPosition,
} from "../store/index.ts";
import type { FilterNode } from "../filters/index.ts";
import { identityAttributes, present, type DirectoryEntry } from "../directory/index.ts";
import { parseGeneralizedTime } from "./accesslog.ts";
import { changeBetween } from "./changes.ts";
import { notImported, readCaptureCheckpoint, writeCaptureCheckpoint } from "./checkpoints.ts";
import type { CaptureContext, CaptureResult } from "./context.ts";
import { entryStream } from "../events/index.ts";
import { lastEntryState } from "./last-state.ts";
import { recordIsolated } from "./failures.ts";
import { entryState, stateIdentity } from "./normalize.ts";
import { MODIFY_TIMESTAMP, modifiedAt, modifiedSince, pollTime } from "./modified-since.ts";
import { polledChangeId } from "./polled-change.ts";
import { noteWithoutIdentity } from "./without-identity.ts";

/**
 * Capture for any LDAPv3 server without an accesslog: every entry modified since the
 * checkpoint (`modifyTimestamp`, one-second resolution, so the checkpoint's own second is read
 * again) is compared with its state in the log and, where it differs, recorded as an observed
 * change: no actor, at the entry's modifyTimestamp. A change is known by what it did
 * (`polledChangeId`), so a second write in the same second is a change of its own.
 *
 * The checkpoint is the newest modifyTimestamp read, written as `pollTime` writes it (the
 * first, written by `ensureImported`, has no fraction and reads the same): the filter is
 * written from the moment it names, never from its text.
 *
 * One pass at a time, across processes (a session advisory lock): two passes that read the
 * same entry at different moments would each record the change from the log to what they
 * read, and the one that read earlier, recording last, would take the entry back. A pass on
 * demand (`captureNow`) waits for the scheduled one, then reads for itself.
 */
export async function captureByPolling(
  context: CaptureContext,
  options: { pageSize?: number } = {},
): Promise<CaptureResult> {
  return withSessionLock(context.pool, POLL_LOCK, async () => {
    const checkpoint = await readCaptureCheckpoint(context.pool, "poll");
    if (checkpoint === undefined) throw notImported("poll");
    // A checkpoint that names no moment reads every entry: comparing states loses nothing.
    const since = parseGeneralizedTime(checkpoint) ?? new Date(0);
    let newest = since;
    const result = await comparePages(context, {
      filter: modifiedSince(since),
      pageSize: options.pageSize,
      onEntry(entry) {
        const modified = modifiedAt(entry);
        if (modified && modified > newest) newest = modified;
      },
    });
    await writeCaptureCheckpoint(context.pool, "poll", pollTime(newest));
    return result;
  });
}

/** The session advisory lock poll passes take, one at a time. */
const POLL_LOCK = "annal:capture:poll";

/**
 * A full reconciliation: every entry is compared with its state in the log, and every entry
 * the log has that the directory no longer has is recorded as deleted (modifyTimestamp
 * cannot show a delete). It runs beside the polling passes and leaves their checkpoint alone.
 *
 * It reads the directory over a while, and the polling passes record what changes meanwhile,
 * so an entry whose stream had an event appended since the reconciliation began is left to
 * them: this read of it may be older than theirs. That holds for the deletes too: an entry
 * added after the reconciliation read past it is in the log and not in what was read.
 */
export async function reconcileByPolling(
  context: CaptureContext,
  options: { pageSize?: number; signal?: AbortSignal } = {},
): Promise<CaptureResult> {
  const mark = await appendMark(context.pool);
  const seen = new Set<string>();
  const compared = await comparePages(context, {
    filter: present("objectClass"),
    pageSize: options.pageSize,
    mark,
    signal: options.signal,
    onEntry(_entry, uuid) {
      seen.add(uuid);
    },
  });
  options.signal?.throwIfAborted();
  const deleted = await recordDeletes(context, seen, mark);
  const position = deleted.position ?? compared.position;
  return { recorded: compared.recorded + deleted.recorded, ...(position ? { position } : {}) };
}

interface ComparePagesOptions {
  readonly filter: FilterNode;
  readonly pageSize?: number | undefined;
  /** Leave alone the entries whose stream moved after this mark (a reconciliation's). */
  readonly mark?: AppendMark | undefined;
  readonly signal?: AbortSignal | undefined;
  onEntry(entry: DirectoryEntry, uuid: string): void;
}

/**
 * Reads the entries `filter` finds, page by page, and records the change from each entry's
 * state in the log to its state read, one transaction per page.
 */
async function comparePages(
  context: CaptureContext,
  options: ComparePagesOptions,
): Promise<CaptureResult> {
  const { directory, normalizer, base } = context;
  const { mark } = options;
  let recorded = 0;
  let position: LogPosition | undefined;
  const unidentified: string[] = [];
  for await (const page of directory.search(base, {
    scope: "sub",
    filter: options.filter,
    attributes: ["*", "+", MODIFY_TIMESTAMP, ...identityAttributes(normalizer.identity)],
    binaryAttributes: normalizer.schema.binaryAttributes(),
    pageSize: options.pageSize ?? 500,
  })) {
    await pausePoint("capture.poll.pageRead", mark ? "reconcile" : "poll");
    if (options.signal?.aborted) break;
    const result = await withTransaction(context.pool, async (tx) => {
      let stored = 0;
      let last: LogPosition | undefined;
      for (const entry of page) {
        const after = entryState(normalizer, entry);
        const uuid = stateIdentity(normalizer, after);
        if (!uuid) {
          unidentified.push(entry.dn);
          continue;
        }
        options.onEntry(entry, uuid);
        // The version the change follows is part of its identity (a note that the change
        // could not be recorded names it too), so it is read before the savepoint.
        const previous = await lastEntryState(tx, entryStream(uuid));
        if (mark && previous.position > mark.position) continue;
        const changeId = polledChangeId(uuid, previous.version, after);
        const appended = await recordIsolated(
          tx,
          context,
          { source: "poll", changeId, dn: entry.dn, entryUUID: uuid },
          async () => {
            const built = changeBetween(uuid, previous.state, after);
            if (!built) return undefined;
            return appendUnlessMoved(
              context.store.appendToStream(
                entryStream(uuid),
                [
                  {
                    type: built.eventType,
                    data: built.change,
                    occurredAt: modifiedAt(entry) ?? new Date(),
                    metadata: { actor: null, source: "poll" },
                    idempotencyKey: `poll:${changeId}`,
                  },
                ],
                // Against a mark, the change is from the state just read: if another pass
                // moved the stream since, that pass read the entry later.
                mark ? { tx, expectedVersion: previous.version || "no_stream" } : { tx },
              ),
            );
          },
        );
        if (!appended) continue;
        stored += appended.appended;
        if (appended.appended > 0) last = appended.events[0];
      }
      return { stored, last };
    });
    recorded += result.stored;
    position = result.last ?? position;
  }
  noteWithoutIdentity(context, "poll", unidentified);
  return { recorded, ...(position ? { position } : {}) };
}

/** The append's result, or undefined when another writer moved the stream first. */
async function appendUnlessMoved(append: Promise<AppendResult>): Promise<AppendResult | undefined> {
  try {
    return await append;
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) return undefined;
    throw error;
  }
}

/**
 * Entries whose last event is not a delete but which the directory no longer has, unless
 * their stream moved after `mark`.
 */
async function recordDeletes(
  context: CaptureContext,
  present: Set<string>,
  mark: AppendMark,
): Promise<CaptureResult> {
  const known = await context.pool.query<{ stream_id: string }>(
    `SELECT s.stream_id FROM streams s
      WHERE s.stream_id LIKE 'entry-%'
        AND NOT EXISTS (SELECT 1 FROM events e WHERE e.stream_id = s.stream_id
                          AND e.stream_version = s.version AND e.type = 'EntryDeleted')`,
  );
  let recorded = 0;
  let position: LogPosition | undefined;
  for (const { stream_id: streamId } of known.rows) {
    const uuid = streamId.slice("entry-".length);
    if (present.has(uuid)) continue;
    await withTransaction(context.pool, async (tx) => {
      const previous = await lastEntryState(tx, streamId);
      if (previous.position > mark.position || previous.version === 0) return;
      const changeId = polledChangeId(uuid, previous.version, null);
      const appended = await recordIsolated(
        tx,
        context,
        { source: "poll", changeId, dn: previous.state?.dn ?? "", entryUUID: uuid },
        async () => {
          const built = changeBetween(uuid, previous.state, null);
          if (!built) return undefined;
          return appendUnlessMoved(
            context.store.appendToStream(
              streamId,
              [
                {
                  type: built.eventType,
                  data: built.change,
                  occurredAt: new Date(),
                  metadata: { actor: null, source: "poll" },
                  idempotencyKey: `poll:${changeId}`,
                },
              ],
              { tx, expectedVersion: previous.version },
            ),
          );
        },
      );
      if (!appended) return;
      recorded += appended.appended;
      position = appended.events[0];
    });
  }
  return { recorded, ...(position ? { position } : {}) };
}
