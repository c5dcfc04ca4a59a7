import type { Pool } from "../../db/index.ts";
import {
  annalEvent,
  entryStream,
  ERASURE_STREAM,
  stateAfterEvent,
  type EntryEventType,
  type RecordedOf,
} from "../../events/index.ts";
import { appendInTransaction, readStream } from "../../store/index.ts";
import { contentDigest } from "../chain/content.ts";
import {
  ErasureEntryPresentError,
  ErasureEntryUnknownError,
  ErasureReasonMissingError,
} from "../errors.ts";
import { attributeNamesOf, redactEntryEvent } from "./redact.ts";

export interface EraseOptions {
  readonly entryUUID: string;
  /** Why: recorded in the erasure's event (the order's reference, not the person's data). */
  readonly reason: string;
  /** The attributes to erase; default every user attribute the entry ever had but objectClass. */
  readonly attributes?: readonly string[];
}

export interface Erasure {
  readonly entryUUID: string;
  readonly attributes: readonly string[];
  /** The positions of the events whose values were redacted. */
  readonly positions: readonly number[];
  /** The position of the `EntryErased` event. */
  readonly position: number;
}

/**
 * Redacts one entry's values in the log (a right-to-erasure order), in one transaction: every
 * event of its stream has the values of the erased attributes replaced (`redactEntryEvent`),
 * and an `EntryErased` event on the erasures' stream says which attributes, which events (each
 * with its content digest before, which keeps the hash chain verifiable) and why. Projections
 * hold the values too: the caller rebuilds them (`src/app/erasure.ts`).
 *
 * The entry must be gone from the directory (its stream's last event a delete), or the next
 * change or snapshot would record its values again: `ANNAL_ERASURE_ENTRY_PRESENT`.
 */
export async function eraseEntry(pool: Pool, options: EraseOptions): Promise<Erasure> {
  const reason = options.reason.trim();
  if (reason === "") throw new ErasureReasonMissingError();
  const streamId = entryStream(options.entryUUID);
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    try {
      // The stream's row, locked: capture appends to it under the same lock.
      const locked = await client.query("SELECT 1 FROM streams WHERE stream_id = $1 FOR UPDATE", [
        streamId,
      ]);
      if (locked.rows.length === 0) throw new ErasureEntryUnknownError(options.entryUUID);
      const events = (await readStream(
        client,
        streamId,
      )) as unknown as RecordedOf<EntryEventType>[];
      const last = events.at(-1);
      if (last && stateAfterEvent(last)) throw new ErasureEntryPresentError(options.entryUUID);
      const datas = events.map((event) => event.data as unknown as Record<string, unknown>);
      const names = options.attributes
        ? new Set(options.attributes.map((name) => name.toLowerCase()))
        : attributeNamesOf(datas);
      const changed: { position: number; digest: string; erasedDigest: string }[] = [];
      for (const event of events) {
        const redacted = redactEntryEvent(event.data as unknown as Record<string, unknown>, names);
        if (!redacted) continue;
        const digestOf = async () => {
          const result = await client.query<{ digest: Buffer }>(
            `SELECT ${contentDigest("e")} AS digest FROM events AS e WHERE e.position = $1`,
            [event.position],
          );
          return result.rows[0]!.digest.toString("hex");
        };
        const digest = await digestOf();
        await client.query("UPDATE events SET data = $2 WHERE position = $1", [
          event.position,
          JSON.stringify(redacted),
        ]);
        changed.push({ position: event.position, digest, erasedDigest: await digestOf() });
      }
      const attributes = [...names].sort();
      const appended = await appendInTransaction(
        client,
        ERASURE_STREAM,
        [
          annalEvent("EntryErased", {
            entryUUID: options.entryUUID,
            attributes,
            events: changed,
            reason,
          }),
        ],
        "any",
      );
      await client.query("COMMIT");
      return {
        entryUUID: options.entryUUID,
        attributes,
        positions: changed.map((c) => c.position),
        position: appended.events[0]!.position,
      };
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
  } finally {
    client.release();
  }
}
