import { parseArgs, type ParseArgsConfig } from "node:util";
import { AnnalError } from "../errors.ts";

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
