import type { Queryable } from "../../db/index.ts";
import { ERASURE_STREAM, type EntryErased } from "../../events/index.ts";
import { readStream } from "../../store/index.ts";

/** An erased event's content digests: before its first erasure, and after its last. */
export interface ErasedDigest {
  readonly before: Buffer;
  readonly after: Buffer;
}

/**
 * The content digests of erased events, by position, read from the erasures' stream. An
 * erasure rewrites an event's values, so its content digest changes; the chain (and
 * retention's kept digest) were taken over the digest before, which the erasure event keeps
 * with the digest after (digests, never values). An erased event is what was chained when its
 * content now has the digest its last erasure left and the digest before its first erasure
 * is the one chained (`chainedDigest`).
 */
export async function erasedDigests(db: Queryable): Promise<Map<number, ErasedDigest>> {
  const digests = new Map<number, ErasedDigest>();
  for (const event of await readStream(db, ERASURE_STREAM)) {
    for (const { position, digest, erasedDigest } of (event.data as EntryErased).events) {
      const before = digests.get(position)?.before ?? Buffer.from(digest, "hex");
      digests.set(position, { before, after: Buffer.from(erasedDigest, "hex") });
    }
  }
  return digests;
}

/**
 * The digest an event was chained (or kept by retention) with, given its content digest now:
 * for an event whose content is what its last erasure left, the digest before its first.
 */
export function chainedDigest(
  position: number,
  digest: Buffer,
  erased: ReadonlyMap<number, ErasedDigest>,
): Buffer {
  const known = erased.get(position);
  return known && known.after.equals(digest) ? known.before : digest;
}
