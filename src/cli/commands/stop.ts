/** `annal stop`: stops the annal started from this directory. */
import { loadConfig } from "../../config/index.ts";
import { stopAnnal } from "../../operations/index.ts";
import { durationMs } from "../../time/index.ts";
import type { CommandModule } from "../command.ts";
import type { Output } from "../output.ts";
import { STOP } from "../registry.ts";
import { parseCommandLine, UsageError } from "../usage.ts";

/** As long as `annal start` gives itself to stop before it gives up. */
const DEFAULT_GRACE = "30s";

export const command: CommandModule = {
  run(args, output) {
    const { values } = parseCommandLine(args, STOP);
    return annalStop(values, output);
  },
};

/**
 * `annal stop [--timeout <duration>] [--config F]`: SIGTERM to the process of the pid file in
 * the data directory, then waits up to the timeout for it to end.
 */
export async function annalStop(
  options: { config?: string; timeout?: string },
  output: Output,
): Promise<number> {
  const text = options.timeout ?? DEFAULT_GRACE;
  const graceMs = durationMs(text);
  if (graceMs === undefined) {
    throw new UsageError(`--timeout ${text}: expected a duration such as 30s or 2m`);
  }
  const config = await loadConfig({ configPath: options.config, argv: [] });
  const { pid } = await stopAnnal(config.database.dataDir, { graceMs });
  output.out(`annal (pid ${pid}) stopped`);
  return 0;
}
