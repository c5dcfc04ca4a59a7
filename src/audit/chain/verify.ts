import type { Queryable } from "../../db/index.ts";
import {
  comparePositions,
  logOrder,
  logPositionColumns,
  logPositionCompare,
  logPositionOf,
  readLastEvent,
  START,
  type LogPosition,
  type LogPositionRow,
} from "../../store/index.ts";
import { RETENTION_STREAM, type LogRetained } from "../../events/index.ts";
import { chainedDigest, erasedDigests, type ErasedDigest } from "../erasure/digests.ts";
import { keptDigest } from "../retention/kept-digest.ts";
import { contentDigest, GENESIS, linkHash } from "./content.ts";
import { LogPositionUnknownError, LogTamperedError } from "../errors.ts";
import { readChainHead, readLinkOf, type ChainLink } from "./rows.ts";

export interface VerifyChainOptions {
  /** The event to start at (its position); default the first. */
  readonly from?: number;
  /** The event to end at (its position), included; default the chain's head. */
  readonly to?: number;
  /** Links per read; default 5,000. */
  readonly pageSize?: number;
  /** Called after each page: links checked, and how many the range holds. */
  readonly onProgress?: (checked: number, total: number) => void;
}

export interface VerifiedChain {
  /** Links checked. */
  readonly checked: number;
  /** The last link checked: its hash is what the chain leads to. */
  readonly last: ChainLink | undefined;
}

interface WalkRow extends LogPositionRow {
  readonly hash: Buffer;
  readonly prev_hash: Buffer;
  readonly chained_at: Date;
  /** null when the chained event is gone. */
  readonly digest: Buffer | null;
}

/**
 * Walks the chain from `from` to `to` in log order, recomputing every link from the event as
 * stored now (the same content digest the chainer took), and throws `LogTamperedError` naming
 * the first event that does not match: its content changed, it was removed, a link was
 * rewritten, or an event appears in the chained part of the log that the chain never saw.
 * Starting mid-chain it trusts the first link's previous hash (only a walk from the start
 * checks the whole chain). After retention the walk from the start begins at the newest run's
 * cut, from the link its `LogRetained` event names, having checked the digest of what the run
 * left before the cut. An erased event matches by its content digest before erasure, which
 * its erasure event keeps, as long as its content is what the erasure left.
 */
export async function verifyChain(
  db: Queryable,
  options: VerifyChainOptions = {},
): Promise<VerifiedChain> {
  const erased = await erasedDigests(db);
  // After retention a walk from the start begins at the cut, from the link it names.
  const retained = options.from === undefined ? await checkRetained(db, erased) : undefined;
  const first =
    options.from === undefined ? retained?.first : await linkAt(db, options.from, "from");
  const end =
    options.to === undefined ? await readChainHead(db) : await linkAt(db, options.to, "to");
  if (!end) return { checked: 0, last: undefined };
  const pageSize = options.pageSize ?? 5000;
  const total = await countLinks(db, first?.at, end.at);
  let after: LogPosition = START;
  let from = first?.at;
  let expected = retained ? retained.headHash : first ? first.prevHash : GENESIS;
  let checked = 0;
  let last: ChainLink | undefined;
  // An event the chain skipped is named where the walk would have met it.
  const unchained = await firstUnchainedEvent(db, first?.at, end.at);
  const skipped = (at: LogPosition) => {
    if (unchained && comparePositions(at, unchained) > 0) {
      throw new LogTamperedError(unchained.position, UNCHAINED);
    }
  };
  for (;;) {
    const rows = await readWalkPage(db, from, after, end.at, pageSize);
    for (const row of rows) {
      const at = logPositionOf(row);
      skipped(at);
      if (!row.digest) throw new LogTamperedError(at.position, "the event is gone from the log");
      if (!row.prev_hash.equals(expected)) {
        throw new LogTamperedError(at.position, "its link does not follow the one before it");
      }
      const digests = [row.digest, chainedDigest(at.position, row.digest, erased)];
      if (!digests.some((digest) => linkHash(expected, digest).equals(row.hash))) {
        throw new LogTamperedError(at.position, "the event is not what was chained");
      }
      expected = row.hash;
      last = { at, hash: row.hash, prevHash: row.prev_hash, chainedAt: row.chained_at };
      checked++;
    }
    options.onProgress?.(checked, total);
    if (rows.length < pageSize) break;
    after = last!.at;
    from = undefined;
  }
  if (unchained) throw new LogTamperedError(unchained.position, UNCHAINED);
  return { checked, last };
}

const UNCHAINED = "the event is in the chained part of the log but not in the chain";

/**
 * The newest retention run's facts, checked: the events it left before its cut are what it
 * left (their digest), and the first kept link is the one at the cut. Undefined before any run.
 */
async function checkRetained(
  db: Queryable,
  erased: ReadonlyMap<number, ErasedDigest>,
): Promise<{ first: ChainLink; headHash: Buffer } | undefined> {
  const last = await readLastEvent(db, RETENTION_STREAM);
  if (!last) return undefined;
  const run = last.data as LogRetained;
  const cut: LogPosition = run.cut;
  const kept = await keptDigest(db, cut, erased);
  if (kept.count !== run.keptEvents || kept.digest.toString("hex") !== run.keptDigest) {
    throw new LogTamperedError(
      cut.position,
      `the events retention left before it (${run.keptEvents}, checkpoints and kinds kept whole) are not what it left`,
    );
  }
  const first = await readLinkOf(db, cut.position);
  if (!first)
    throw new LogTamperedError(cut.position, "the first event kept by retention is not chained");
  return { first, headHash: Buffer.from(run.chainHead.hash, "hex") };
}

async function linkAt(db: Queryable, position: number, option: string): Promise<ChainLink> {
  const link = await readLinkOf(db, position);
  if (!link) throw new LogPositionUnknownError(position, option);
  return link;
}

/** Links from `from` (included) or after `after`, up to `end` (included), with their events' digests. */
async function readWalkPage(
  db: Queryable,
  from: LogPosition | undefined,
  after: LogPosition,
  end: LogPosition,
  limit: number,
): Promise<WalkRow[]> {
  const params: unknown[] = [];
  const start = from
    ? logPositionCompare("c", ">=", from, params)
    : logPositionCompare("c", ">", after, params);
  const upTo = logPositionCompare("c", "<=", end, params);
  params.push(limit);
  const result = await db.query<WalkRow>(
    `SELECT ${logPositionColumns("c")}, c.hash, c.prev_hash, c.chained_at,
            (SELECT ${contentDigest("e")} FROM events AS e WHERE e.position = c.position) AS digest
       FROM event_chain AS c
      WHERE ${start} AND ${upTo}
      ORDER BY ${logOrder("c")} LIMIT $${params.length}`,
    params,
  );
  return result.rows;
}

async function countLinks(
  db: Queryable,
  from: LogPosition | undefined,
  end: LogPosition,
): Promise<number> {
  const params: unknown[] = [];
  const start = logPositionCompare("c", ">=", from ?? START, params);
  const result = await db.query<{ count: string }>(
    `SELECT count(*) AS count FROM event_chain AS c
      WHERE ${start} AND ${logPositionCompare("c", "<=", end, params)}`,
    params,
  );
  return Number(result.rows[0]?.count ?? 0);
}

/** The first event in the range that has no link although the chain has passed it. */
async function firstUnchainedEvent(
  db: Queryable,
  from: LogPosition | undefined,
  end: LogPosition,
): Promise<LogPosition | undefined> {
  const params: unknown[] = [];
  const start = logPositionCompare("e", ">=", from ?? START, params);
  const result = await db.query<LogPositionRow>(
    `SELECT ${logPositionColumns("e")} FROM events AS e
      WHERE ${start} AND ${logPositionCompare("e", "<=", end, params)}
        AND NOT EXISTS (SELECT 1 FROM event_chain AS c WHERE c.position = e.position)
      ORDER BY ${logOrder("e")} LIMIT 1`,
    params,
  );
  const row = result.rows[0];
  return row && logPositionOf(row);
}
