import { loadConfig, serverUrl, type AnnalConfig } from "../../config/index.ts";
import { isRunningNode, NotRunningError, readPidFile } from "../../operations/index.ts";

/** The annal a command drives: where it serves, and the configuration it was started with. */
export interface RunningAnnal {
  readonly url: string;
  readonly config: AnnalConfig;
}

/**
 * The annal started from this directory, found as `annal stop` finds it (the pid file in the
 * configuration's data directory, its process alive), serving where the configuration says
 * (`[server]`, `PORT`); or the one at `url` when given, wherever it runs.
 *
 * @throws NotRunningError `ANNAL_NOT_RUNNING` when no `url` is given and none runs here.
 */
export async function runningAnnal(options: {
  readonly config?: string | undefined;
  readonly url?: string | undefined;
}): Promise<RunningAnnal> {
  const config = await loadConfig({ configPath: options.config, argv: [] });
  if (options.url !== undefined) return { url: options.url.replace(/\/+$/, ""), config };
  const dataDir = config.database.dataDir;
  const pidFile = await readPidFile(dataDir);
  if (pidFile === undefined) throw new NotRunningError(dataDir, "no pid file (or pass --url)");
  if (!isRunningNode(pidFile.pid)) {
    throw new NotRunningError(dataDir, `its process ${pidFile.pid} is gone`);
  }
  return { url: serverUrl(config.server), config };
}
