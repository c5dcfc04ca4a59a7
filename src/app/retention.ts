import { setTimeout as sleep } from "node:timers/promises";
import { RetentionInProgressError, runRetention, type RetentionReport } from "../audit/index.ts";
import type { AnnalConfig } from "../config/index.ts";
import { logLoopFailure, type Pool } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import type { Logger } from "../logger.ts";
import { shift, type Span } from "../time/index.ts";
import { allProjections, replayProjection } from "./projections.ts";

/** How long entries' streams are kept, by the configuration; undefined: forever. */
export function entryKeep(config: AnnalConfig): Span | undefined {
  return config.retention.streams.entry ?? config.retention.keep;
}

/** How long finished workflow instances' streams are kept; undefined: forever. */
export function workflowKeep(config: AnnalConfig): Span | undefined {
  return config.retention.streams.workflow ?? config.retention.keep;
}

/** The horizon the configuration puts at `now`: events that occurred before it are folded. */
export function retentionHorizon(config: AnnalConfig, now: Date): Date | undefined {
  const keep = entryKeep(config);
  return keep && shift(now, keep, -1, "UTC");
}

export interface RetainLogOptions {
  readonly now?: Date;
  readonly dryRun?: boolean;
  /** Progress of each phase: folding streams, then each projection's rebuild. */
  readonly onProgress?: (phase: string, done: number, total: number) => void;
}

/**
 * One retention run (`runRetention`) at the horizon the configuration puts at `now`, then a
 * rebuild of every projection from the log it left, so that they hold nothing of the removed
 * events and are what a replay gives. Readers keep their tables during the rebuilds (each is
 * built side by side and swapped in).
 */
export async function retainLog(
  config: AnnalConfig,
  pool: Pool,
  options: RetainLogOptions = {},
): Promise<RetentionReport> {
  const now = options.now ?? new Date();
  const horizon = retentionHorizon(config, now);
  if (!horizon) {
    throw new AnnalError(
      "ANNAL_RETENTION_NOT_CONFIGURED",
      "the configuration keeps every event: there is no [retention] keep",
    );
  }
  const workflows = workflowKeep(config);
  const report = await runRetention(pool, {
    horizon,
    ...(workflows && { workflowHorizon: shift(now, workflows, -1, "UTC") }),
    dryRun: options.dryRun ?? false,
    onProgress: (done, total) => options.onProgress?.("streams", done, total),
  });
  if (report.dryRun || report.streamsFolded === 0) return report;
  for (const projection of allProjections(config)) {
    await replayProjection({
      pool,
      projection,
      onProgress: (done, total) => options.onProgress?.(projection.name, done, total),
    });
  }
  return report;
}

/**
 * Runs retention every `[retention] interval` in the workers part, the first a minute after
 * start; where several processes run workers, the one that takes retention's lock runs it
 * and the others skip that turn. Nothing runs without `[retention] keep`.
 */
export function startPeriodicRetention(
  config: AnnalConfig,
  pool: Pool,
  log: Pick<Logger, "info" | "error" | "warn">,
): { stop(): Promise<void> } {
  const stopping = new AbortController();
  const loop = (async () => {
    if (!entryKeep(config)) return;
    let wait = Math.min(60_000, config.retention.interval);
    for (;;) {
      await sleep(wait, undefined, { signal: stopping.signal }).catch(() => {});
      if (stopping.signal.aborted) return;
      wait = config.retention.interval;
      try {
        const report = await retainLog(config, pool);
        if (report.streamsFolded > 0) {
          log.info(
            { retention: { ...report, horizon: report.horizon.toISOString() } },
            `retention: ${report.streamsFolded} streams folded at ${report.horizon.toISOString()}, ${report.eventsRemoved} events removed`,
          );
        }
      } catch (error) {
        if (error instanceof RetentionInProgressError) continue;
        logLoopFailure(log, error, {}, "retention failed; trying again at the next interval");
      }
    }
  })();
  return {
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
