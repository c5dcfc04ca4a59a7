import type { FilterNode } from "../filters/index.ts";
import type { LogPosition } from "../store/index.ts";
import { dnEquals, isDescendantOf } from "../directory/index.ts";
import { and, eq, ge, not, or } from "../directory/index.ts";
import {
  ACCESSLOG_ATTRIBUTES,
  ACCESSLOG_BINARY,
  readAccesslogEntry,
  type AccesslogRecord,
} from "./accesslog.ts";
import { recordLoggedWrites, type WriteLog } from "./logged-writes.ts";
import { notImported, readCaptureCheckpoint } from "./checkpoints.ts";
import type { CaptureContext, CaptureResult } from "./context.ts";
import { parseGeneralizedTime } from "./accesslog.ts";

export const ACCESSLOG_BASE = "cn=accesslog";

const WRITES = or(
  eq("objectClass", "auditAdd"),
  eq("objectClass", "auditModify"),
  eq("objectClass", "auditModRDN"),
  eq("objectClass", "auditDelete"),
);

/**
 * The accesslog's entries of successful writes logged after `reqEnd`. Capture's place is a
 * `reqEnd`, not a `reqStart`: slapd stamps `reqStart` when a request arrives and logs the
 * write when it is done, so with several writers at once a write with an earlier `reqStart`
 * often becomes visible after a later one (about one in twenty, measured), and a place taken
 * from `reqStart` would pass over it for good. slapd applies and logs writes one at a time,
 * stamping `reqEnd` as it logs each: `reqEnd` is the order in which writes become visible.
 *
 * The record the checkpoint names is left out on the server (`>=` and not `=`: the accesslog
 * schema gives `reqEnd` no strict ordering rule). It was recorded, and it may be large: the add
 * of a group of 100,000 members is 5.6 MB of `reqMod`, which every idle pass read and decoded
 * again, stalling the event loop. No other record shares its `reqEnd`: slapd takes each
 * `reqEnd` from `slap_op_time`, whose fraction counts the operations within a second, so two
 * records never have the same one.
 */
export function accesslogWritesAfter(reqEnd: string): FilterNode {
  return and(WRITES, eq("reqResult", "0"), ge("reqEnd", reqEnd), not(eq("reqEnd", reqEnd)));
}

/** The accesslog as a log of writes: its place is a `reqEnd`, a record's id its `reqStart`. */
export const ACCESSLOG: WriteLog<AccesslogRecord> = {
  source: "accesslog",
  place: (record) => record.reqEnd,
  isAfter: (place, checkpoint) => place > checkpoint,
  id: (record) => record.reqStart,
  // slapd's reqStart has whole seconds; its six "fraction" digits count the operations
  // within that second. So occurredAt is exact to the second.
  occurredAt: (record) => parseGeneralizedTime(record.reqStart.replace(/[.,]\d+Z$/, "Z")),
};

/**
 * Records every successful write the accesslog logged after the checkpoint (a `reqEnd`), in
 * the order slapd logged them, one transaction per page: the events and the new checkpoint
 * commit together, so a run that stops midway resumes where it stopped. Each event's
 * idempotency key is its `reqStart` (the accesslog entry's name), so reading the same range
 * again records nothing new, even from two processes at once.
 */
export async function captureFromAccesslog(
  context: CaptureContext,
  options: { pageSize?: number } = {},
): Promise<CaptureResult> {
  const { pool, directory, log } = context;
  const start = await readCaptureCheckpoint(pool, "accesslog");
  if (start === undefined) throw notImported("accesslog");
  let recorded = 0;
  let position: LogPosition | undefined;
  for await (const page of directory.search(ACCESSLOG_BASE, {
    scope: "one",
    filter: accesslogWritesAfter(start),
    attributes: [...ACCESSLOG_ATTRIBUTES],
    binaryAttributes: [...ACCESSLOG_BINARY],
    pageSize: options.pageSize ?? 500,
  })) {
    const read: AccesslogRecord[] = [];
    for (const entry of page) {
      const record = await readAccesslogEntry(entry);
      if (record) read.push(record);
    }
    const records = read
      .filter((r) => dnEquals(r.dn, context.base) || isDescendantOf(r.dn, context.base))
      .sort((a, b) => (a.reqEnd < b.reqEnd ? -1 : a.reqEnd > b.reqEnd ? 1 : 0));
    if (records.length === 0) continue;
    const result = await recordLoggedWrites(context, ACCESSLOG, records);
    recorded += result.recorded;
    position = result.position ?? position;
  }
  if (recorded > 0) log.debug({ recorded }, "captured changes from the accesslog");
  return { recorded, ...(position ? { position } : {}) };
}

/**
 * The newest `reqEnd` in the accesslog (or the given fallback when it is empty): where
 * capture starts after an import. Reads only the reqEnd of each record, page by page.
 */
export async function accesslogHead(context: CaptureContext, fallback: string): Promise<string> {
  let newest = fallback;
  for await (const page of context.directory.search(ACCESSLOG_BASE, {
    scope: "one",
    filter: WRITES,
    attributes: ["reqEnd"],
    pageSize: 1000,
  })) {
    for (const entry of page) {
      const value = entry.attributes.reqEnd?.[0];
      const text = Buffer.isBuffer(value) ? value.toString("utf8") : value;
      if (text && text > newest) newest = text;
    }
  }
  return newest;
}
