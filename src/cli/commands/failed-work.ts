/**
 * `annal failed-work list|retry`: change events whose processing failed for good, and
 * processing them again.
 */
import { openDatabase, prepareEventStore } from "../../app/index.ts";
import { loadConfig } from "../../config/index.ts";
import { AnnalError } from "../../errors/index.ts";
import {
  FAILED_WORK_STATES,
  listFailedWork,
  loadHooks,
  retryFailedWork,
  type FailedWork,
  type FailedWorkState,
} from "../../hooks/index.ts";
import { startJobs } from "../../jobs/index.ts";
import { createLogger } from "../../logger.ts";
import type { CommandModule } from "../command.ts";
import { FAILED_WORK_LIST, FAILED_WORK_RETRY } from "../registry.ts";
import type { Output } from "../output.ts";
import { columns, parseLimit } from "../table.ts";
import { parseCommandLine, UsageError } from "../usage.ts";

export const command: CommandModule = {
  run(args, output) {
    const [sub, ...rest] = args;
    if (sub === "list") {
      const { values } = parseCommandLine(rest, FAILED_WORK_LIST);
      return failedWorkList(values, output);
    }
    if (sub === "retry") {
      const { values, positionals } = parseCommandLine(rest, FAILED_WORK_RETRY);
      return failedWorkRetry(positionals[0]!, values, output);
    }
    throw new UsageError("failed-work needs list or retry");
  },
};

/**
 * `annal failed-work list [--state failed,retrying|all] [--limit N] [--json] [--config F]`:
 * change events whose processing failed for good, newest first, as a table or JSON lines.
 */
export async function failedWorkList(
  options: { config?: string; state?: string; limit?: string; json?: boolean },
  output: Output,
): Promise<number> {
  const states = parseStates(options.state);
  const limit = options.limit === undefined ? undefined : parseLimit(options.limit);
  const config = await loadConfig({ configPath: options.config, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  try {
    await prepareEventStore(database.pool, log);
    const items = await listFailedWork(database.pool, { states, limit });
    if (options.json) {
      for (const item of items) output.out(JSON.stringify(item));
    } else if (items.length === 0) {
      output.out("no failed work");
    } else {
      for (const line of table(items)) output.out(line);
    }
  } finally {
    await database.close();
  }
  return 0;
}

/**
 * `annal failed-work retry <id> [--config F]`: records the retry and queues the change event
 * for processing again, with its provider's retry settings (hooks files are read for them;
 * their secrets are not needed).
 */
export async function failedWorkRetry(
  id: string,
  options: { config?: string },
  output: Output,
): Promise<number> {
  const config = await loadConfig({ configPath: options.config, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const registry = await loadHooks({ dir: config.hooks?.dir, secrets: false });
  const database = await openDatabase(config, log);
  try {
    const store = await prepareEventStore(database.pool, log);
    // Only to queue the job: no maintenance, no schedules in a command that ends at once.
    const jobs = await startJobs({ pool: database.pool, log, supervise: false, schedule: false });
    try {
      const result = await retryFailedWork({ store, jobs, registry }, id, {
        requestedBy: `cli:${process.env.USER ?? "unknown"}`,
      });
      output.out(
        result.queued
          ? `queued ${id} for processing again`
          : `a retry of ${id} was already queued; nothing new queued`,
      );
    } finally {
      await jobs.stop();
    }
  } finally {
    await database.close();
  }
  return 0;
}

function parseStates(value: string | undefined): readonly FailedWorkState[] | undefined {
  if (value === undefined) return undefined;
  if (value === "all") return FAILED_WORK_STATES;
  const states = value.split(",");
  if (!states.every((s) => (FAILED_WORK_STATES as readonly string[]).includes(s))) {
    throw new AnnalError(
      "ANNAL_USAGE",
      `--state ${value}: expected failed, retrying, resolved (comma-separated) or all`,
    );
  }
  return states as FailedWorkState[];
}

function table(items: readonly FailedWork[]): string[] {
  const rows = items.map((item) => [
    item.id,
    item.state,
    `${item.hook}/${item.webhook}`,
    `${item.source}/${item.eventId}`,
    String(item.attempts),
    item.failedAt.toISOString(),
    `${item.lastError.code ? `${item.lastError.code}: ` : ""}${item.lastError.message}`.slice(
      0,
      120,
    ),
  ]);
  return columns(["id", "state", "webhook", "event", "attempts", "failed at", "last error"], rows);
}
