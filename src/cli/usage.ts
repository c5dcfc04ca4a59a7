import { parseArgs } from "node:util";
import { AnnalError } from "../errors/index.ts";
import type { Options, Usage } from "./command.ts";

/** The command line is not one annal understands. */
export class UsageError extends AnnalError {
  constructor(message: string, hint = "run annal --help for the commands and their options") {
    super("ANNAL_USAGE", message, { hint });
  }
}

/**
 * `node:util` `parseArgs`, strict, over a command's declared usage, with its complaints said in
 * annal's words (`ANNAL_USAGE`, naming the option) and a hint listing what the command takes,
 * rather than Node's text.
 */
export function parseCommandLine<const T extends Options>(
  args: readonly string[],
  usage: Usage<T>,
) {
  const { options, positionals } = usage;
  const takes = () => {
    const names = Object.entries(options).map(([name, option]) =>
      option.type === "string" ? `--${name} <value>` : `--${name}`,
    );
    const command = ["annal", ...usage.words].join(" ");
    const help = usage.words.length === 0 ? "annal --help" : `${command} --help`;
    return names.length === 0
      ? `${command} takes no options; ${help} says more`
      : `${command} takes ${names.join(", ")}; ${help} says more`;
  };
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(usageMessage(error as NodeJS.ErrnoException, args), takes());
  }
  const count = parsed.positionals.length;
  if (count < positionals.min) throw new UsageError(`missing ${positionals.what}`, takes());
  if (count > positionals.max) {
    throw new UsageError(`unexpected argument "${parsed.positionals[positionals.max]}"`, takes());
  }
  return parsed;
}

/** What went wrong, from parseArgs's error code (its own messages are long and Node's). */
function usageMessage(error: NodeJS.ErrnoException, args: readonly string[]): string {
  const option = /'(-{1,2}[^' ]+)/.exec(error.message)?.[1] ?? args.find((a) => a.startsWith("-"));
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option ${option}`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return /argument missing/.test(error.message)
        ? `option ${option?.split(" ")[0]} needs a value`
        : `option ${option?.split(" ")[0]} takes no value`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return "unexpected argument";
    default:
      return "the command line is not one annal understands";
  }
}
