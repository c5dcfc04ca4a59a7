import type { Queryable } from "../../db/index.ts";
import { ERASURE_STREAM, type EntryErased } from "../../events/index.ts";
import { readStream } from "../../store/index.ts";

/**
 * The content digests erased events had before each erasure, by position, oldest first, read
 * from the erasures' stream. An erasure rewrites an event's values, so its content digest
 * changes; the chain and retention's kept digest were taken over the digest before, which the
 * erasure event keeps (a digest, never a value). `annal log verify` accepts an erased event
 * when one of these, or its content now, is what was chained.
 */
export async function erasedDigests(db: Queryable): Promise<Map<number, Buffer[]>> {
  const digests = new Map<number, Buffer[]>();
  for (const event of await readStream(db, ERASURE_STREAM)) {
    for (const { position, digest } of (event.data as EntryErased).events) {
      const known = digests.get(position) ?? [];
      known.push(Buffer.from(digest, "hex"));
      digests.set(position, known);
    }
  }
  return digests;
}
