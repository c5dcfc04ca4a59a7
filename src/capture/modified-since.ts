import { ge, type DirectoryEntry } from "../directory/index.ts";
import type { FilterNode } from "../filters/index.ts";
import { parseGeneralizedTime } from "./accesslog.ts";

/**
 * The attribute poll capture reads the moment of an entry's last change from. It is asked for
 * by name beside `*` and `+`: Active Directory returns its operational attributes only by
 * name.
 */
export const MODIFY_TIMESTAMP = "modifyTimestamp";

/**
 * A moment as poll capture writes it, in its checkpoint and in its filter: generalized time
 * to the whole second, with a fraction of zero (`20261122043500.0Z`). Every server reads that
 * form; Active Directory matched every entry with `modifyTimestamp>=20261122043500Z`, the
 * form without a fraction. modifyTimestamp has whole seconds (slapd, 389, AD), so cutting a
 * finer moment down to its second reads that second again, never less.
 *
 * @example pollTime(new Date("2026-11-22T04:35:00.123Z")) // "20261122043500.0Z"
 */
export function pollTime(moment: Date): string {
  const iso = moment.toISOString(); // 2026-11-22T04:35:00.123Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}.0Z`;
}

/**
 * The filter of the entries modified at or after `since`, in the form every server reads
 * (`pollTime`). The second of `since` itself is read again: a write later in that second has
 * the same modifyTimestamp as one read before it.
 *
 * @example renderFilter(modifiedSince(new Date("2026-11-22T04:35:00Z"))) // "(modifyTimestamp>=20261122043500.0Z)"
 */
export function modifiedSince(since: Date): FilterNode {
  return ge(MODIFY_TIMESTAMP, pollTime(since));
}

/**
 * When the entry was last modified, by its modifyTimestamp (the name matched without regard to
 * case: AD spells it `modifyTimeStamp`); undefined when the server returned none.
 */
export function modifiedAt(entry: DirectoryEntry): Date | undefined {
  for (const name in entry.attributes) {
    if (name.toLowerCase() !== "modifytimestamp") continue;
    const value = entry.attributes[name]?.[0];
    const text = Buffer.isBuffer(value) ? value.toString("utf8") : value;
    return text ? parseGeneralizedTime(text) : undefined;
  }
  return undefined;
}
