import type { Output } from "./output.ts";

/**
 * One command of `annal`: its name (the first word), its lines in `annal --help`, and how it
 * runs from its own arguments. Each lives in `commands/` and calls the features it needs;
 * `main.ts` only dispatches.
 */
export interface Command {
  readonly name: string;
  /** Its lines in `annal --help`, indented as the help lists them. */
  readonly usage: string;
  /** Runs with the arguments after the name; the exit status, or throws an `AnnalError`. */
  run(args: readonly string[], output: Output): Promise<number>;
}

/** `--config <file>`, which every command that reads the configuration takes. */
export const CONFIG_OPTION = { config: { type: "string" } } as const;
