import { and, dnEquals, eq, ge, isDescendantOf, present } from "../directory/index.ts";
import type { LogPosition } from "../store/index.ts";
import { parseGeneralizedTime } from "./accesslog.ts";
import {
  CHANGELOG_ATTRIBUTES,
  CHANGELOG_BASE,
  CHANGELOG_BINARY,
  readChangelogEntry,
  type ChangelogRecord,
} from "./changelog.ts";
import { notImported, readCaptureCheckpoint } from "./checkpoints.ts";
import type { CaptureContext, CaptureResult } from "./context.ts";
import { recordLoggedWrites, type WriteLog } from "./logged-writes.ts";

/** The retro changelog as a log of writes: its place and a record's id are the change number. */
const CHANGELOG: WriteLog<ChangelogRecord> = {
  source: "changelog",
  place: (record) => String(record.changeNumber),
  isAfter: (place, checkpoint) => Number(place) > Number(checkpoint),
  id: (record) => String(record.changeNumber),
  occurredAt: (record) => parseGeneralizedTime(record.reqStart),
};

/**
 * Records every write 389's retro changelog logged after the checkpoint (a change number), in
 * the changelog's order, a page a transaction with the checkpoint. The checkpoint's own record
 * is left out on the server (`>=` the next number): it was recorded.
 */
export async function captureFromChangelog(
  context: CaptureContext,
  options: { pageSize?: number } = {},
): Promise<CaptureResult> {
  const start = await readCaptureCheckpoint(context.pool, "changelog");
  if (start === undefined) throw notImported("changelog");
  let recorded = 0;
  let position: LogPosition | undefined;
  for await (const page of context.directory.search(CHANGELOG_BASE, {
    scope: "one",
    filter: and(eq("objectClass", "changelogentry"), ge("changeNumber", String(Number(start) + 1))),
    attributes: [...CHANGELOG_ATTRIBUTES],
    binaryAttributes: [...CHANGELOG_BINARY],
    pageSize: options.pageSize ?? 500,
  })) {
    const read: ChangelogRecord[] = [];
    for (const entry of page) {
      const record = await readChangelogEntry(entry, context.normalizer.identity);
      if (record) read.push(record);
    }
    const records = read
      .filter((r) => dnEquals(r.dn, context.base) || isDescendantOf(r.dn, context.base))
      .sort((a, b) => a.changeNumber - b.changeNumber);
    if (records.length === 0) continue;
    const result = await recordLoggedWrites(context, CHANGELOG, records);
    recorded += result.recorded;
    position = result.position ?? position;
  }
  if (recorded > 0) context.log.debug({ recorded }, "captured changes from the changelog");
  return { recorded, ...(position ? { position } : {}) };
}

/**
 * The changelog's newest change number (0 when it is empty): where capture starts after an
 * import. 389 names it in the root DSE (`lastchangenumber`); a server that does not is read.
 */
export async function changelogHead(context: Pick<CaptureContext, "directory">): Promise<string> {
  for await (const page of context.directory.search("", {
    scope: "base",
    filter: present("objectClass"),
    attributes: ["lastchangenumber"],
    paged: false,
  })) {
    for (const entry of page) {
      for (const [name, values] of Object.entries(entry.attributes)) {
        if (name.toLowerCase() !== "lastchangenumber") continue;
        const value = values[0];
        const text = Buffer.isBuffer(value) ? value.toString("utf8") : value;
        if (text && /^\d+$/.test(text)) return text;
      }
    }
  }
  let newest = 0;
  for await (const page of context.directory.search(CHANGELOG_BASE, {
    scope: "one",
    filter: present("changeNumber"),
    attributes: ["changeNumber"],
    pageSize: 1000,
  })) {
    for (const entry of page) {
      const value = entry.attributes.changeNumber?.[0] ?? entry.attributes.changenumber?.[0];
      const number = Number(Buffer.isBuffer(value) ? value.toString("utf8") : value);
      if (Number.isSafeInteger(number) && number > newest) newest = number;
    }
  }
  return String(newest);
}
