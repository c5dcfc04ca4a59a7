import { withTransaction } from "../db/index.ts";
import type { LogPosition } from "../store/index.ts";
import type { DirectoryEntry } from "../directory/index.ts";
import { ge, present } from "../directory/index.ts";
import { parseGeneralizedTime } from "./accesslog.ts";
import { changeBetween } from "./changes.ts";
import { notImported, readCaptureCheckpoint, writeCaptureCheckpoint } from "./checkpoints.ts";
import type { CaptureContext, CaptureResult } from "./context.ts";
import { entryStream } from "../events/index.ts";
import { lastEntryState } from "./last-state.ts";
import { recordIsolated } from "./failures.ts";
import { entryState } from "./normalize.ts";

/**
 * Capture for any LDAPv3 server without an accesslog: every entry modified since the
 * checkpoint (`modifyTimestamp`, one-second resolution, so the checkpoint's own second is read
 * again) is compared with its state in the log and, where it differs, recorded as an observed
 * change: no actor, at the entry's modifyTimestamp.
 *
 * `reconcile` reads every entry instead, and records as deleted every entry the log has that
 * the directory no longer has: modifyTimestamp cannot show a delete.
 */
export async function captureByPolling(
  context: CaptureContext,
  options: { reconcile?: boolean; pageSize?: number } = {},
): Promise<CaptureResult> {
  const { directory, normalizer, base } = context;
  const since = await readCaptureCheckpoint(context.pool, "poll");
  if (since === undefined) throw notImported("poll");
  const filter = options.reconcile ? present("objectClass") : ge("modifyTimestamp", since);
  const seen = new Set<string>();
  let newest = since;
  let recorded = 0;
  let position: LogPosition | undefined;
  for await (const page of directory.search(base, {
    scope: "sub",
    filter,
    attributes: ["*", "+"],
    binaryAttributes: normalizer.schema.binaryAttributes(),
    pageSize: options.pageSize ?? 500,
  })) {
    const result = await withTransaction(context.pool, async (tx) => {
      let stored = 0;
      let last: LogPosition | undefined;
      for (const entry of page) {
        const after = entryState(normalizer, entry);
        const uuid = after.operational.entryUUID?.[0]?.toLowerCase();
        if (!uuid) continue;
        seen.add(uuid);
        const modified = after.operational.modifyTimestamp?.[0];
        if (modified && modified > newest) newest = modified;
        const appended = await recordIsolated(
          tx,
          context,
          {
            source: "poll",
            changeId: `${uuid}:${after.operational.entryCSN?.[0] ?? modified ?? ""}`,
            dn: entry.dn,
            entryUUID: uuid,
          },
          async () => {
            const previous = await lastEntryState(tx, entryStream(uuid));
            const built = changeBetween(uuid, previous.state, after);
            if (!built) return undefined;
            return context.store.appendToStream(
              entryStream(uuid),
              [
                {
                  type: built.eventType,
                  data: built.change,
                  occurredAt: observedAt(entry) ?? new Date(),
                  metadata: { actor: null, source: "poll" },
                  idempotencyKey: `poll:${uuid}:${after.operational.entryCSN?.[0] ?? modified ?? ""}:${built.change.changeType}`,
                },
              ],
              { tx },
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
  if (options.reconcile) {
    const deleted = await recordDeletes(context, seen);
    recorded += deleted.recorded;
    position = deleted.position ?? position;
  }
  await writeCaptureCheckpoint(context.pool, "poll", newest);
  return { recorded, ...(position ? { position } : {}) };
}

/** Entries whose last event is not a delete but which the directory no longer has. */
async function recordDeletes(
  context: CaptureContext,
  present: Set<string>,
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
      const built = changeBetween(uuid, previous.state, null);
      if (!built || previous.version === 0) return;
      const appended = await context.store.appendToStream(
        streamId,
        [
          {
            type: built.eventType,
            data: built.change,
            occurredAt: new Date(),
            metadata: { actor: null, source: "poll" },
          },
        ],
        { tx, expectedVersion: previous.version },
      );
      recorded += appended.appended;
      position = appended.events[0];
    });
  }
  return { recorded, ...(position ? { position } : {}) };
}

function observedAt(entry: DirectoryEntry): Date | undefined {
  const value = entry.attributes.modifyTimestamp?.[0];
  const text = Buffer.isBuffer(value) ? value.toString("utf8") : value;
  return text ? parseGeneralizedTime(text) : undefined;
}
