import { openDatabase, prepareEventStore, retainLog } from "../../app/index.ts";
import { loadConfig } from "../../config/index.ts";
import { createLogger } from "../../logger.ts";
import type { CommandModule } from "../command.ts";
import type { Output } from "../output.ts";
import { RETENTION_RUN } from "../registry.ts";
import { parseCommandLine, UsageError } from "../usage.ts";
import { phaseProgress } from "./phase-progress.ts";

/**
 * `annal retention run [--dry-run]`: one retention run at the configured horizon, with a
 * progress bar per phase on standard error; prints what it folded (or would fold).
 */
async function runRetentionCommand(args: readonly string[], output: Output): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand !== "run") {
    throw new UsageError(
      subcommand === undefined
        ? "retention needs a subcommand: run"
        : `unknown retention subcommand "${subcommand}"; the subcommand is run`,
    );
  }
  const { values } = parseCommandLine(rest, RETENTION_RUN);
  const config = await loadConfig({ configPath: values.config, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  const progress = phaseProgress((phase) => (phase === "streams" ? "streams" : "events"));
  try {
    await prepareEventStore(database.pool, log);
    const report = await retainLog(config, database.pool, {
      dryRun: values["dry-run"] === true,
      onProgress: (phase, done, total) => progress.update(phase, done, total),
    });
    progress.stop();
    const horizon = report.horizon.toISOString();
    if (!report.cut) {
      output.out(`nothing to fold before ${horizon}`);
    } else {
      output.out(
        report.dryRun
          ? `would fold ${report.streamsFolded} streams at the horizon ${horizon}, removing ${report.eventsRemoved} events`
          : `folded ${report.streamsFolded} streams at the horizon ${horizon}, removed ${report.eventsRemoved} events`,
      );
      output.out(
        `the kept chain starts at event ${report.cut.position}, after event ${report.chainHead!.position} (${report.chainHead!.hash})`,
      );
      if (report.partitionsDropped.length > 0) {
        output.out(`partitions dropped: ${report.partitionsDropped.join(", ")}`);
      }
    }
    return 0;
  } finally {
    progress.stop();
    await database.close();
  }
}

export const command: CommandModule = { run: runRetentionCommand };
