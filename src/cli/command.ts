import type { ParseArgsConfig } from "node:util";
import type { Output } from "./output.ts";

/** The options of one command line, as `node:util` `parseArgs` takes them. */
export type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * The usage of one command or subcommand, declared once: `annal --help` lists it, `annal
 * <words> --help` prints it, and the command parses its arguments with it
 * (`parseCommandLine(args, usage)`), so what the help says is what the parser takes.
 */
export interface Usage<T extends Options = Options> {
  /** The words that name it after `annal`: `["token", "create"]`, `["start"]`. */
  readonly words: readonly string[];
  /** What follows the words, e.g. `--name <name> --access <read,export,...> [--config <file>]`. */
  readonly synopsis: string;
  /** What it does, in a line or a few (the help indents them). */
  readonly description: string;
  /** Its options; every one appears in the synopsis (a test checks). */
  readonly options: T;
  /** How many arguments it takes besides its options, and what to say when one is missing. */
  readonly positionals: { readonly min: number; readonly max: number; readonly what: string };
}

/** Declares a usage, keeping its options' literal types for `parseCommandLine`. */
export function usage<const T extends Options>(declared: Usage<T>): Usage<T> {
  return declared;
}

/**
 * One command of `annal` in the registry (`registry.ts`): its name (the first word), its
 * usages (one, or one per subcommand), and its implementation, loaded only when it runs so
 * that `--help` loads none of them. `main.ts` only dispatches, and answers `--help` from the
 * usages.
 */
export interface Command {
  readonly name: string;
  /** Its usage, or one per subcommand in the order the help lists them. */
  readonly usages: readonly Usage[];
  /** Its module in `commands/`. */
  load(): Promise<{ readonly command: CommandModule }>;
}

/** A command's implementation, in `commands/`: it calls the features it needs. */
export interface CommandModule {
  /** Runs with the arguments after the name; the exit status, or throws an `AnnalError`. */
  run(args: readonly string[], output: Output): Promise<number>;
}

/** `--config <file>`, which every command that reads the configuration takes. */
export const CONFIG_OPTION = { config: { type: "string" } } as const;

/** No arguments besides the options. */
export const NO_POSITIONALS = { min: 0, max: 0, what: "" } as const;
