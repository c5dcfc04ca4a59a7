import type { Pool } from "../db/index.ts";
import { ProjectionTimeoutError, waitForProjection } from "../projector/index.ts";
import { readHead, type LogPosition } from "../store/index.ts";

/** How long one page waits for the projections at most (a projector stopped or gone). */
const PACE_MAX_WAIT_MS = 5_000;

/**
 * Paces a pass that writes page after page of snapshots by the projections that apply them.
 * Each call notes the log's head and waits until every projection in `projections` has
 * applied the log up to the head the call before noted, so the pass keeps at most about two
 * of its pages ahead of the slowest one.
 *
 * Why: a change captured during the pass is applied after every snapshot written before it
 * (log order), so its lag is what the projections still have to apply. Unpaced, a periodic
 * snapshot of 100,000 entries wrote faster than the projections applied (`appendToStreams`
 * appends a page with one COPY) and a change waited behind the growing backlog: p99 1.7 to
 * 2.3 s in the capture benchmark. A projection that does not move within `maxWaitMs` (no
 * projector runs, or one is rebuilding) stops holding the pass up for that page; an aborted
 * `signal` stops the wait at once (the pass then stops before its next page).
 */
export function paceByProjections(
  pool: Pool,
  projections: readonly string[],
  options: { readonly maxWaitMs?: number; readonly signal?: AbortSignal | undefined } = {},
): () => Promise<void> {
  const { maxWaitMs = PACE_MAX_WAIT_MS, signal } = options;
  let noted: LogPosition | undefined;
  return async () => {
    const target = noted;
    noted = await readHead(pool);
    if (target === undefined) return;
    const deadline = Date.now() + maxWaitMs;
    for (const projection of projections) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      try {
        await waitForProjection(pool, projection, target, left, signal);
      } catch (error) {
        if (error instanceof ProjectionTimeoutError) return;
        throw error;
      }
    }
  };
}
