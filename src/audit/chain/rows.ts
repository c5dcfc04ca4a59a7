import type { Queryable } from "../../db/index.ts";
import {
  logOrder,
  logPositionColumns,
  logPositionCompare,
  logPositionOf,
  type LogPosition,
  type LogPositionRow,
} from "../../store/index.ts";

/** One link of the chain: an event's place in the log and its hash. */
export interface ChainLink {
  readonly at: LogPosition;
  readonly hash: Buffer;
  readonly prevHash: Buffer;
  readonly chainedAt: Date;
}

interface LinkRow extends LogPositionRow {
  readonly hash: Buffer;
  readonly prev_hash: Buffer;
  readonly chained_at: Date;
}

const LINK_COLUMNS = `${logPositionColumns("c")}, c.hash, c.prev_hash, c.chained_at`;

function linkOf(row: LinkRow): ChainLink {
  return {
    at: logPositionOf(row),
    hash: row.hash,
    prevHash: row.prev_hash,
    chainedAt: row.chained_at,
  };
}

/** The chain's last link in log order, or undefined before the first event is chained. */
export async function readChainHead(db: Queryable): Promise<ChainLink | undefined> {
  const result = await db.query<LinkRow>(
    `SELECT ${LINK_COLUMNS} FROM event_chain AS c ORDER BY ${logOrder("c", "backward")} LIMIT 1`,
  );
  const row = result.rows[0];
  return row && linkOf(row);
}

/** The link of the event at `position`, or undefined when it is not chained (yet). */
export async function readLinkOf(db: Queryable, position: number): Promise<ChainLink | undefined> {
  const result = await db.query<LinkRow>(
    `SELECT ${LINK_COLUMNS} FROM event_chain AS c WHERE c.position = $1`,
    [position],
  );
  const row = result.rows[0];
  return row && linkOf(row);
}

/**
 * The last link at or before `at` in log order: the chain's head as it stood when the log
 * reached `at` (a signed export names it).
 */
export async function readLinkAtOrBefore(
  db: Queryable,
  at: LogPosition,
): Promise<ChainLink | undefined> {
  const params: unknown[] = [];
  const result = await db.query<LinkRow>(
    `SELECT ${LINK_COLUMNS} FROM event_chain AS c WHERE ${logPositionCompare("c", "<=", at, params)}
      ORDER BY ${logOrder("c", "backward")} LIMIT 1`,
    params,
  );
  const row = result.rows[0];
  return row && linkOf(row);
}
