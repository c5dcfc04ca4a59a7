import { openDatabase, prepareEventStore } from "../../app/index.ts";
import { verifyChain } from "../../audit/index.ts";
import { loadConfig } from "../../config/index.ts";
import { createLogger } from "../../logger.ts";
import type { CommandModule } from "../command.ts";
import type { Output } from "../output.ts";
import { progressBar } from "../progress.ts";
import { LOG_VERIFY } from "../registry.ts";
import { parseCommandLine, UsageError } from "../usage.ts";

/** `--from 42`: an event's position, a whole number from 1. */
function positionOption(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[1-9]\d{0,15}$/.test(text)) {
    throw new UsageError(
      `--${name} takes an event's position, a whole number from 1; got "${text}"`,
    );
  }
  return Number(text);
}

/**
 * `annal log verify [--from N] [--to N]`: walks the hash chain with a progress bar on standard
 * error, and prints the head it reached; a mismatch throws `ANNAL_LOG_TAMPERED` naming the
 * event (exit 1).
 */
export async function runLogCommand(args: readonly string[], output: Output): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand !== "verify") {
    throw new UsageError(
      subcommand === undefined
        ? "log needs a subcommand: verify"
        : `unknown log subcommand "${subcommand}"; the subcommand is verify`,
    );
  }
  const { values } = parseCommandLine(rest, LOG_VERIFY);
  const from = positionOption("from", values.from);
  const to = positionOption("to", values.to);
  const config = await loadConfig({ configPath: values.config, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  const bar = progressBar("log verify", "events");
  let started = false;
  try {
    await prepareEventStore(database.pool, log);
    const verified = await verifyChain(database.pool, {
      from,
      to,
      onProgress: (checked, total) => {
        if (!started) bar.start(total, checked);
        started = true;
        bar.update(checked);
      },
    });
    if (started) bar.stop();
    started = false;
    const last = verified.last;
    output.out(
      last
        ? `the chain holds: ${verified.checked} events checked, up to event ${last.at.position} with hash ${last.hash.toString("hex")}`
        : "the chain is empty: no event is chained yet",
    );
    return 0;
  } finally {
    if (started) bar.stop();
    await database.close();
  }
}

export const command: CommandModule = { run: runLogCommand };
