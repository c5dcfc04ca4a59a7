/** `annal logs`: the log of the annal started from this directory. */
import { access } from "node:fs/promises";
import { loadConfig } from "../../config/index.ts";
import { logFilePath, NotRunningError, readLogs } from "../../operations/index.ts";
import type { CommandModule } from "../command.ts";
import type { Output } from "../output.ts";
import { LOGS } from "../registry.ts";
import { parseCommandLine } from "../usage.ts";
import { momentOption } from "./access.ts";

export const command: CommandModule = {
  run(args, output) {
    const { values } = parseCommandLine(args, LOGS);
    return annalLogs(values, output);
  },
};

/**
 * `annal logs [--follow] [--since <moment>] [--config F]`: the lines of `<dataDir>/annal.log`
 * (JSON, as annal start writes them), those at or after `--since`; with `--follow`, then the
 * new ones as they come, until Ctrl-C.
 */
export async function annalLogs(
  options: { config?: string; follow?: boolean; since?: string },
  output: Output,
): Promise<number> {
  const since =
    options.since === undefined
      ? undefined
      : momentOption(options.since, { now: new Date(), timeZone: "UTC" }, "--since");
  const config = await loadConfig({ configPath: options.config, argv: [] });
  const file = logFilePath(config.database.dataDir);
  try {
    await access(file);
  } catch {
    throw new NotRunningError(config.database.dataDir, `no log file ${file}`);
  }
  const stopping = new AbortController();
  const stop = () => stopping.abort();
  if (options.follow) {
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  }
  try {
    await readLogs(
      file,
      { ...(since ? { since } : {}), follow: options.follow === true, signal: stopping.signal },
      (line) => output.out(line),
    );
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
  return 0;
}
