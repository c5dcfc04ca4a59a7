import { setTimeout as sleep } from "node:timers/promises";
import { logLoopFailure, trySessionLock, type Pool, type SessionLock } from "../../db/index.ts";
import type { Logger } from "../../logger.ts";
import { chainBatch } from "./chain-batch.ts";
import { readChainHead } from "./rows.ts";

export interface ChainerOptions {
  readonly pool: Pool;
  readonly log: Pick<Logger, "info" | "error" | "debug">;
  /** Between two looks at the log when the chain has caught up, in ms; default 1 s. */
  readonly interval?: number;
  /** Events chained per transaction; default 1,000. */
  readonly batchSize?: number;
  /** How often the head is logged when it moved, in ms; default a minute. */
  readonly headEvery?: number;
}

export interface Chainer {
  stop(): Promise<void>;
}

/** The session advisory lock whose holder is the one process that chains. */
const CHAIN_LOCK = "annal:chain";

/**
 * Chains the log (`chainBatch`) in one process at a time across every annal process, the one
 * that holds the chain's session advisory lock; the others try to take it at every turn, so
 * when the holder stops or dies another takes over. It runs beside the projector (it reads the
 * log the same way), catches up batch after batch, then looks again every `interval`.
 *
 * It logs the chain's head (position, hash) at most every `headEvery` when it moved, so a copy
 * of the log's state leaves the database with the logs: an auditor can pin a head and check
 * later that the chain still leads to it (`annal log verify`).
 */
export function startChainer(options: ChainerOptions): Chainer {
  const { pool, log } = options;
  const interval = options.interval ?? 1000;
  const batchSize = options.batchSize ?? 1000;
  const headEvery = options.headEvery ?? 60_000;
  const stopping = new AbortController();
  let lock: SessionLock | undefined;
  let headLoggedAt = 0;
  let chainedSinceLogged = 0;

  const logHead = async () => {
    if (chainedSinceLogged === 0 || Date.now() - headLoggedAt < headEvery) return;
    const head = await readChainHead(pool);
    if (!head) return;
    log.info(
      { chainHead: { position: head.at.position, hash: head.hash.toString("hex") } },
      `log chain head: event ${head.at.position}, ${head.hash.toString("hex")}`,
    );
    headLoggedAt = Date.now();
    chainedSinceLogged = 0;
  };

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        lock ??= await trySessionLock(pool, CHAIN_LOCK);
        if (lock) {
          const chained = await chainBatch(pool, batchSize);
          chainedSinceLogged += chained;
          await logHead();
          if (chained === batchSize) continue;
        }
      } catch (error) {
        if (stopping.signal.aborted) break;
        logLoopFailure(log, error, {}, "chaining the log failed; trying again");
      }
      await sleep(interval, undefined, { signal: stopping.signal }).catch(() => {});
    }
    await lock?.release();
  })();

  return {
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
