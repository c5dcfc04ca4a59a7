import { eraseFromLog, openDatabase, prepareEventStore } from "../../app/index.ts";
import { loadConfig } from "../../config/index.ts";
import { createLogger } from "../../logger.ts";
import type { CommandModule } from "../command.ts";
import type { Output } from "../output.ts";
import { ERASE } from "../registry.ts";
import { parseCommandLine } from "../usage.ts";
import { phaseProgress } from "./phase-progress.ts";

/**
 * `annal erase <entry id|dn> --reason <text> [--attributes a,b]`: erases one entry's values
 * from the log and rebuilds the projections (a progress bar each), then prints what it erased.
 */
async function runErase(args: readonly string[], output: Output): Promise<number> {
  const { values, positionals } = parseCommandLine(args, ERASE);
  const config = await loadConfig({ configPath: values.config, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  const progress = phaseProgress(() => "events");
  try {
    await prepareEventStore(database.pool, log);
    const attributes = values.attributes
      ?.split(",")
      .map((name) => name.trim())
      .filter((name) => name !== "");
    const erasure = await eraseFromLog(config, database.pool, {
      entry: positionals[0]!,
      reason: values.reason ?? "",
      ...(attributes ? { attributes } : {}),
      onProgress: (phase, done, total) => progress.update(`rebuild ${phase}`, done, total),
    });
    progress.stop();
    output.out(
      `erased ${erasure.attributes.join(", ")} of entry ${erasure.entryUUID} in ${erasure.positions.length} events; recorded as event ${erasure.position}`,
    );
    return 0;
  } finally {
    progress.stop();
    await database.close();
  }
}

export const command: CommandModule = { run: runErase };
