import { parseArgs, type ParseArgsConfig } from "node:util";
import { AnnalError } from "../errors.ts";

export const USAGE = `usage: annal <command> [options]

commands:
  start [--config <file>] [--only api|workers|projector]
      run annal: the HTTP server, the projector and the workers (or one of them)
  replay <projection> [--config <file>]
      rebuild a projection from the event log, side by side, then swap it in
  import [--config <file>]
      take a snapshot of every directory entry (the first one also starts capture)
  failed-work list [--state failed,retrying|all] [--limit N] [--json] | retry <id>
      change events whose processing failed for good, and retrying them
  hooks send <hook>/<webhook> (--body <json> | --body-file <file>) [--url U] [--secret-env NAME]
      sign a change event with $WEBHOOK_SECRET (or NAME) and send it
  verify [--config <file>]
      check the Node.js version, the configuration, the database and its migrations
  --version [--json]
      print the version and the source commit

The configuration is --config, else $ANNAL_CONFIG, else ./annal.toml, else the demo.`;

/** The command line is not one annal understands. */
export class UsageError extends AnnalError {
  constructor(message: string) {
    super("ANNAL_USAGE", message, { hint: "run annal --help for the commands and their options" });
  }
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** `node:util` `parseArgs`, strict, with its complaints turned into `ANNAL_USAGE`. */
export function parseCommandLine<const T extends Options>(
  args: readonly string[],
  options: T,
  positionals: { min: number; max: number; what: string },
) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const count = parsed.positionals.length;
  if (count < positionals.min) throw new UsageError(`missing ${positionals.what}`);
  if (count > positionals.max) {
    throw new UsageError(`unexpected argument "${parsed.positionals[positionals.max]}"`);
  }
  return parsed;
}
