import { asksForHelp, commandHelp, topLevelHelp } from "./help.ts";
import { processOutput, failureLines, type Output } from "./output.ts";
import { parseCommandLine, UsageError } from "./usage.ts";
import { ANNAL, COMMANDS } from "./registry.ts";
import { versionLines } from "./version.ts";

/** What `annal --help` prints: from the same usages the commands parse with. */
export const USAGE = topLevelHelp(COMMANDS, [ANNAL]);

/**
 * Runs the `annal` command line and returns the exit status: 0, or 1 after printing
 * `annal: <CODE>: <message>` (and `annal: hint: ...`) on standard error.
 */
export async function main(
  argv: readonly string[],
  output: Output = processOutput,
): Promise<number> {
  try {
    return await run(argv, output);
  } catch (error) {
    for (const line of failureLines(error)) output.err(line);
    return 1;
  }
}

async function run(argv: readonly string[], output: Output): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError("no command given");

  if (name.startsWith("-")) {
    const { values } = parseCommandLine(argv, ANNAL);
    if (values.help) return printUsage(output);
    if (values.version) {
      for (const line of await versionLines(values.json === true)) output.out(line);
      return 0;
    }
    throw new UsageError(`${name} needs a command, or is not an option of annal`);
  }
  // `annal help [<command> [<subcommand>]]` is `annal [<command> [<subcommand>]] --help`.
  if (name === "help" && rest[0] === undefined) return printUsage(output);
  const [commandName, ...commandArgs] = name === "help" ? rest : argv;
  const command = COMMANDS.find((candidate) => candidate.name === commandName);
  if (!command) throw new UsageError(`unknown command "${commandName}"`);
  if (name === "help" || asksForHelp(commandArgs)) {
    for (const line of commandHelp(command, commandArgs)) output.out(line);
    return 0;
  }
  const { command: implementation } = await command.load();
  return implementation.run(rest, output);
}

function printUsage(output: Output): number {
  output.out(USAGE);
  return 0;
}
