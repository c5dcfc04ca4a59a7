import {
  allProjections,
  openDatabase,
  prepareEventStore,
  replayProjection,
} from "../../app/index.ts";
import { loadConfig } from "../../config/index.ts";
import { AnnalError } from "../../errors/index.ts";
import { createLogger } from "../../logger.ts";
import type { Output } from "../output.ts";
import { progressBar } from "../progress.ts";
import type { CommandModule } from "../command.ts";
import { REPLAY } from "../registry.ts";
import { parseCommandLine } from "../usage.ts";

/** `annal replay <name>` names no projection this program has. */
export class UnknownProjectionError extends AnnalError {
  readonly projection: string;
  readonly known: readonly string[];

  constructor(projection: string, known: readonly string[]) {
    super("ANNAL_UNKNOWN_PROJECTION", `there is no projection named "${projection}"`, {
      hint:
        known.length === 0
          ? "this program defines no projections yet"
          : `the projections are: ${known.join(", ")}`,
    });
    this.projection = projection;
    this.known = known;
  }
}

/** `annal replay` without a name: the projections there are, with their versions. */
export async function listProjections(
  options: { config?: string },
  output: Output,
): Promise<number> {
  const config = await loadConfig({ configPath: options.config, argv: [] });
  output.out("the projections (annal replay <projection> rebuilds one):");
  for (const projection of allProjections(config)) {
    output.out(`  ${projection.name.padEnd(16)} version ${projection.version}`);
  }
  return 0;
}

/**
 * `annal replay <projection>`: rebuilds it side by side (the live tables keep serving) and
 * swaps it in, with a progress bar on standard error when that is a terminal.
 */
export async function runReplay(
  name: string,
  options: { config?: string },
  output: Output,
): Promise<number> {
  const config = await loadConfig({ configPath: options.config, argv: [] });
  const projections = allProjections(config);
  const projection = projections.find((candidate) => candidate.name === name);
  if (!projection)
    throw new UnknownProjectionError(
      name,
      projections.map((p) => p.name),
    );

  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  const bar = progressBar(`replay ${name}`, "events");
  const startedAt = performance.now();
  let started = false;
  let total = 0;
  try {
    await prepareEventStore(database.pool, log);
    await replayProjection({
      pool: database.pool,
      projection,
      onProgress: (done, all) => {
        total = all;
        if (!started) bar.start(all, done);
        started = true;
        bar.setTotal(all);
        bar.update(done);
      },
    });
  } finally {
    bar.stop();
    await database.close();
  }
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
  output.out(`replayed ${name} (version ${projection.version}): ${total} events in ${seconds} s`);
  return 0;
}

export const command: CommandModule = {
  run(args, output) {
    const { values, positionals } = parseCommandLine(args, REPLAY);
    // Without a name: which projections there are to replay.
    if (positionals[0] === undefined) return listProjections(values, output);
    return runReplay(positionals[0], values, output);
  },
};
