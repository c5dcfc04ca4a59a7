import { openDatabase, prepareEventStore } from "../../app/index.ts";
import { startDirectory } from "../../app/index.ts";
import { loadConfig } from "../../config/index.ts";
import { ensureImported, importEntries } from "../../capture/index.ts";
import { AnnalError } from "../../errors/index.ts";
import { createLogger } from "../../logger.ts";
import type { Output } from "../output.ts";
import { progressBar } from "../progress.ts";
import type { CommandModule } from "../command.ts";
import { IMPORT } from "../registry.ts";
import { parseCommandLine } from "../usage.ts";

/**
 * `annal import`: a snapshot event for every entry of the directory, with a progress bar on
 * standard error. On a database that has never imported, this is the first-start import (it
 * also sets where capture starts). It connects to a running demo directory, or starts it.
 */
export async function runImport(options: { config?: string }, output: Output): Promise<number> {
  const config = await loadConfig({ configPath: options.config, argv: [] });
  if (!config.directory) {
    throw new AnnalError("ANNAL_DIRECTORY_NOT_CONFIGURED", "the configuration has no [directory]", {
      hint: "add a [directory] section to annal.toml",
    });
  }
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  const bar = progressBar("import", "entries");
  const startedAt = performance.now();
  let imported = 0;
  try {
    const store = await prepareEventStore(database.pool, log);
    const parts = ["workers"] as const;
    const common = { config, pool: database.pool, store, parts, log };
    // First see whether the directory is up (a running `npm start` has the demo's); quietly,
    // since not finding it is expected when annal is not running.
    let directory = await startDirectory({
      ...common,
      log: log.child({}, { level: "silent" }),
      startDemo: false,
    });
    if (!directory.capture && config.directory.demo) {
      directory = await startDirectory({ ...common, startDemo: true });
    }
    const capture = directory.capture;
    // A directory reached whose certificate did not verify says so, not "could not be reached".
    const { failure } = directory;
    if (!capture && failure instanceof AnnalError && failure.code === "ANNAL_LDAP_TLS_FAILED") {
      throw failure;
    }
    if (!capture) {
      throw new AnnalError(
        "ANNAL_DIRECTORY_UNAVAILABLE",
        `the directory at ${config.directory.url} could not be reached`,
        { hint: "check [directory] url, bindDN and the password's environment variable" },
      );
    }
    try {
      let started = false;
      const onProgress = (done: number, total: number) => {
        imported = done;
        if (!started) bar.start(total, done);
        started = true;
        bar.setTotal(total);
        bar.update(done);
      };
      // Two pages written at once: what an operator runs, to be done soon (see ImportOptions).
      const options = { onProgress, writers: 2 };
      const first = await ensureImported(capture, config.directory.capture.source, options);
      if (!first) await importEntries(capture, { reason: "import", ...options });
    } finally {
      await directory.stop();
    }
  } finally {
    bar.stop();
    await database.close();
  }
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
  output.out(`imported ${imported} entries in ${seconds} s`);
  return 0;
}

export const command: CommandModule = {
  run(args, output) {
    const { values } = parseCommandLine(args, IMPORT);
    return runImport(values, output);
  },
};
