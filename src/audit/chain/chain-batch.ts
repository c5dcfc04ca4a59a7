import type { Pool, Queryable } from "../../db/index.ts";
import {
  beginLogReader,
  belowSafeBound,
  logOrder,
  logPositionColumns,
  logPositionCompare,
  logPositionOf,
  START,
  type LogPositionRow,
} from "../../store/index.ts";
import { contentDigest, GENESIS, linkHash } from "./content.ts";
import { readChainHead, type ChainLink } from "./rows.ts";

interface DigestRow extends LogPositionRow {
  readonly digest: Buffer;
}

/**
 * Chains the next `limit` events after the chain's head, in log order and only below the
 * log's safe bound, in one transaction; how many it chained.
 *
 * Why below the safe bound and not at append: positions are drawn at insert and commit in any
 * order, so the event before another in log order is known only once every transaction that
 * could still commit below it has ended. Appends do not wait for the chain; the chain follows.
 *
 * The transaction is a log reader's (`beginLogReader`): it writes only `event_chain`, so the
 * safe bound need not wait for it. Two chainers at once (one that lost its lock) would chain
 * the same events: the second one's insert meets the first one's rows on the primary key and
 * rolls back, so the chain never forks.
 */
export async function chainBatch(pool: Pool, limit: number): Promise<number> {
  const client = await pool.connect();
  try {
    await beginLogReader(client);
    try {
      const head = await readChainHead(client);
      const params: unknown[] = [];
      const after = logPositionCompare("e", ">", head?.at ?? START, params);
      params.push(limit);
      const next = await client.query<DigestRow>(
        `SELECT ${logPositionColumns("e")}, ${contentDigest("e")} AS digest FROM events AS e
          WHERE ${after} AND ${belowSafeBound("e")}
          ORDER BY ${logOrder("e")} LIMIT $${params.length}`,
        params,
      );
      if (next.rows.length > 0) await insertLinks(client, head, next.rows);
      await client.query("COMMIT");
      return next.rows.length;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
  } finally {
    client.release();
  }
}

async function insertLinks(
  client: Queryable,
  head: ChainLink | undefined,
  rows: readonly DigestRow[],
): Promise<void> {
  const positions: number[] = [];
  const transactions: string[] = [];
  const hashes: Buffer[] = [];
  const previous: Buffer[] = [];
  let prev = head?.hash ?? GENESIS;
  for (const row of rows) {
    const at = logPositionOf(row);
    const hash = linkHash(prev, row.digest);
    positions.push(at.position);
    transactions.push(at.transactionId);
    hashes.push(hash);
    previous.push(prev);
    prev = hash;
  }
  await client.query(
    `INSERT INTO event_chain (position, transaction_id, hash, prev_hash)
      SELECT * FROM unnest($1::bigint[], $2::xid8[], $3::bytea[], $4::bytea[])`,
    [positions, transactions, hashes, previous],
  );
}
