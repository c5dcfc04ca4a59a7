import { createHash } from "node:crypto";
import type { Queryable } from "../../db/index.ts";
import {
  logOrder,
  logPositionColumns,
  logPositionCompare,
  logPositionOf,
  START,
  type LogPosition,
  type LogPositionRow,
} from "../../store/index.ts";
import { contentDigest } from "../chain/content.ts";
import { chainedDigest, type ErasedDigest } from "../erasure/digests.ts";

interface DigestRow extends LogPositionRow {
  readonly digest: Buffer;
}

export interface KeptDigest {
  readonly digest: Buffer;
  readonly count: number;
}

/**
 * sha256 over the content digests of every event before `cut` in log order: what retention
 * leaves outside the chain (checkpoints, kinds kept whole), which `LogRetained` records and
 * `annal log verify` recomputes. An erased event counts with its digest before its first
 * erasure when its content is what its last erasure left (`chainedDigest`), so an erasure before or after the run changes nothing here. Read in
 * pages, in constant memory.
 */
export async function keptDigest(
  db: Queryable,
  cut: LogPosition,
  erased: ReadonlyMap<number, ErasedDigest>,
  pageSize = 5000,
): Promise<KeptDigest> {
  const hash = createHash("sha256");
  let after = START;
  let count = 0;
  for (;;) {
    const params: unknown[] = [];
    const from = logPositionCompare("e", ">", after, params);
    const to = logPositionCompare("e", "<", cut, params);
    params.push(pageSize);
    const page = await db.query<DigestRow>(
      `SELECT ${logPositionColumns("e")}, ${contentDigest("e")} AS digest FROM events AS e
        WHERE ${from} AND ${to} ORDER BY ${logOrder("e")} LIMIT $${params.length}`,
      params,
    );
    for (const row of page.rows) {
      const at = logPositionOf(row);
      hash.update(chainedDigest(at.position, row.digest, erased));
      after = at;
      count++;
    }
    if (page.rows.length < pageSize) break;
  }
  return { digest: hash.digest(), count };
}
