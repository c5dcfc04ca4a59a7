import { isAnnalPart, shutdownSignal, startAnnal } from "../../app/index.ts";
import { loadConfig } from "../../config/index.ts";
import { createLogger, logFormatFor } from "../../logger.ts";
import { logFilePath, writePidFile } from "../../operations/index.ts";
import { checkNodeVersion } from "./verify.ts";
import { UsageError } from "../usage.ts";
import type { CommandModule } from "../command.ts";
import { START } from "../registry.ts";
import { parseCommandLine } from "../usage.ts";

/** How long stopping may take before the process gives up and exits 1. */
const STOP_DEADLINE_MS = 30_000;

/**
 * `annal start [--config <file>] [--only api|workers|projector] [--dev]`: runs until
 * SIGINT/SIGTERM. `--dev` (or NODE_ENV=development) reloads the rules file when it changes.
 */
export async function runStart(options: {
  config?: string;
  only?: string;
  dev?: boolean;
}): Promise<number> {
  const { only } = options;
  if (only !== undefined && !isAnnalPart(only)) {
    throw new UsageError(`--only takes api, workers or projector, not "${only}"`);
  }
  checkNodeVersion(process.version);
  const config = await loadConfig({ configPath: options.config, argv: [] });
  const { dataDir } = config.database;
  // The log goes to the data directory too, for `annal logs`; the pid file there lets
  // `annal stop` find this process.
  const log = createLogger(config.log.level, {
    pretty: logFormatFor(process.stdout) === "pretty",
    file: logFilePath(dataDir),
  });
  const signalled = shutdownSignal(log);
  const annal = await startAnnal({
    config,
    only,
    log,
    ...(options.dev === true ? { development: true } : {}),
  });
  // Written once started: a start refused (ANNAL_ALREADY_RUNNING) leaves the running one's.
  const removePidFile = await writePidFile(dataDir);

  const signal = await signalled;
  log.info({ signal }, `${signal}: stopping`);
  const deadline = setTimeout(() => {
    log.error({ deadlineMs: STOP_DEADLINE_MS }, "annal did not stop in time; exiting");
    process.exit(1);
  }, STOP_DEADLINE_MS);
  deadline.unref();
  try {
    await annal.stop();
    return 0;
  } catch {
    return 1; // each part that failed to stop is logged
  } finally {
    clearTimeout(deadline);
    await removePidFile();
  }
}

export const command: CommandModule = {
  run(args) {
    const { values } = parseCommandLine(args, START);
    return runStart(values);
  },
};
