import { withTransaction, type Queryable } from "../db/index.ts";
import { entryStream, type EntryState } from "../events/index.ts";
import { storedIdempotencyKeys, type LogPosition } from "../store/index.ts";
import type { AccesslogRecord } from "./accesslog.ts";
import { changeFromAccesslog } from "./changes.ts";
import {
  readCaptureCheckpoint,
  writeCaptureCheckpoint,
  type CheckpointName,
} from "./checkpoints.ts";
import type { CaptureContext, CaptureResult } from "./context.ts";
import { recordIsolated } from "./failures.ts";
import { claimWriteIntent, claimWriteIntentNear, writeFingerprint } from "./intents.ts";
import { lastEntryState } from "./last-state.ts";
import type { Normalizer } from "./normalize.ts";
import { noteWithoutIdentity } from "./without-identity.ts";

/**
 * A directory's log of writes, as capture reads it: slapd's accesslog, 389's retro
 * changelog. Each tells of a write the same way (an `AccesslogRecord`); they differ in how a
 * record is placed in the log and named.
 */
export interface WriteLog<R extends AccesslogRecord> {
  readonly source: CheckpointName & ("accesslog" | "changelog");
  /** The record's place in the log: what capture's checkpoint holds. */
  place(record: R): string;
  /** Whether a place comes after the checkpoint's. */
  isAfter(place: string, checkpoint: string): boolean;
  /** The record's own name in the log: its change's idempotency key (after the source). */
  id(record: R): string;
  /** When the write was made, as the log says. */
  occurredAt(record: R): Date | undefined;
}

/** What `recordLoggedWrites` did; `gap` when it recorded nothing because of `follows`. */
export interface LoggedWritesResult extends CaptureResult {
  /**
   * The records did not follow the checkpoint (`follows` was not where it stands): writes
   * between may not be recorded yet, which only a pass, reading from the checkpoint, can tell.
   */
  readonly gap?: true;
  /** Records that lay at or behind the checkpoint and whose change is not in the log. */
  readonly behindUnrecorded?: readonly string[];
}

/**
 * Records a page of a log's records, in the log's order, in one transaction with the new
 * checkpoint: a run that stops midway resumes where it stopped. Each event's idempotency key
 * is the record's id, so reading the same range again records nothing new, even from two
 * processes at once.
 *
 * `follows`, for records that did not come from a search from the checkpoint (those the
 * directory pushed on the watch): the place of the record the log holds just before the
 * first of them. They are recorded only if the checkpoint stands there (or past them, when a
 * pass took them first); otherwise nothing is, and the result says `gap`.
 */
export async function recordLoggedWrites<R extends AccesslogRecord>(
  context: CaptureContext,
  log: WriteLog<R>,
  records: readonly R[],
  options: { readonly follows?: string } = {},
): Promise<LoggedWritesResult> {
  const { store, normalizer } = context;
  return withTransaction(context.pool, async (tx) => {
    // Holding the checkpoint's row serialises concurrent runs; re-reading it skips what
    // another run recorded meanwhile.
    const checkpoint = await readCaptureCheckpoint(tx, log.source, { lock: true });
    let behindUnrecorded: string[] = [];
    if (options.follows !== undefined) {
      const behind = records.filter(
        (record) => checkpoint !== undefined && !log.isAfter(log.place(record), checkpoint),
      );
      // Pushed records at or behind the checkpoint: a pass took them first, as it may. That
      // each is in the log is checked: a directory that sent its writes out of its log's
      // order would otherwise lose one here without a word.
      if (behind.length > 0) behindUnrecorded = await unrecorded(tx, log, behind);
      if (checkpoint !== options.follows && behind.length < records.length) {
        return { recorded: 0, gap: true, ...(behindUnrecorded.length ? { behindUnrecorded } : {}) };
      }
    }
    const states = new Map<string, { state: EntryState | null; version: number }>();
    let recorded = 0;
    let position: LogPosition | undefined;
    let last: string | undefined;
    const unidentified: string[] = [];
    for (const record of records) {
      const place = log.place(record);
      if (checkpoint !== undefined && !log.isAfter(place, checkpoint)) continue;
      last = place;
      const uuid = record.entryUUID?.toLowerCase();
      let known = uuid ? states.get(uuid) : undefined;
      if (uuid && !known) {
        known = await lastEntryState(tx, entryStream(uuid));
      }
      const appended = await recordIsolated(
        tx,
        context,
        {
          source: log.source,
          changeId: log.id(record),
          dn: record.dn,
          entryUUID: uuid ?? null,
        },
        async () => {
          const built = await changeFromAccesslog(normalizer, record, known?.state ?? null);
          if (!built) {
            if (!uuid) unidentified.push(record.dn);
            return undefined;
          }
          const dns = [record.dn, built.change.dn];
          const fingerprint = fingerprintOf(normalizer, record);
          const at = log.occurredAt(record);
          // 389's Retro Changelog names no author of a delete: annal's own is told by its note
          // for the same entry and kind, made within seconds of the change's time. A note
          // whose write the directory refused was withdrawn, so a delete made by anyone else
          // takes none but one made while annal's own delete of that entry was on its way.
          const cause = record.actor
            ? await claimWriteIntent(tx, {
                dns,
                actor: record.actor,
                fingerprint,
                boundAs: context.directory.bindDN,
              })
            : at && (await claimWriteIntentNear(tx, { dns, fingerprint, at }));
          const result = await store.appendToStream(
            entryStream(built.change.entryUUID),
            [
              {
                type: built.eventType,
                data: built.change,
                occurredAt: log.occurredAt(record) ?? new Date(),
                metadata: {
                  actor: record.actor ?? null,
                  source: log.source,
                  ...(cause ?? {}),
                },
                idempotencyKey: `${log.source}:${log.id(record)}`,
              },
            ],
            { tx },
          );
          return { built, result };
        },
      );
      if (!appended) continue;
      const { built, result } = appended;
      if (result.appended > 0) {
        states.set(built.change.entryUUID, { state: built.change.after, version: result.version });
      } else {
        // Recorded before (a checkpoint from before capture's place was a reqEnd can name an
        // earlier point): the entry's state is the log's, read again for its next change.
        states.delete(built.change.entryUUID);
      }
      recorded += result.appended;
      const event = result.events[0];
      if (event && result.appended > 0) position = event;
    }
    if (last !== undefined) await writeCaptureCheckpoint(tx, log.source, last);
    noteWithoutIdentity(context, log.source, unidentified);
    return {
      recorded,
      ...(position ? { position } : {}),
      ...(behindUnrecorded.length ? { behindUnrecorded } : {}),
    };
  });
}

/** The ids of those records whose change is not in the log. */
async function unrecorded<R extends AccesslogRecord>(
  tx: Queryable,
  log: WriteLog<R>,
  records: readonly R[],
): Promise<string[]> {
  const keys = records.map((record) => `${log.source}:${log.id(record)}`);
  const known = await storedIdempotencyKeys(tx, keys);
  return records.filter((_, i) => !known.has(keys[i]!)).map((record) => log.id(record));
}

/** The record's write as `writeFingerprint` describes the request (user attributes only). */
function fingerprintOf(normalizer: Normalizer, record: AccesslogRecord): string {
  switch (record.type) {
    case "add":
    case "delete":
      return writeFingerprint({ kind: record.type });
    case "modrdn":
      return writeFingerprint({ kind: "modrdn", newRDN: record.newRDN ?? "" });
    case "modify":
      return writeFingerprint({
        kind: "modify",
        changes: record.changes.filter((c) => !normalizer.schema.isOperational(c.attribute)),
      });
  }
}
