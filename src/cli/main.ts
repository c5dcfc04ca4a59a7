import type { Command } from "./command.ts";
import { accessCommand } from "./commands/access.ts";
import { sessionsCommand } from "./commands/sessions.ts";
import { failedWorkCommand } from "./commands/failed-work.ts";
import { hooksCommand } from "./commands/hooks.ts";
import { importCommand } from "./commands/import.ts";
import { replayCommand } from "./commands/replay.ts";
import { startCommand } from "./commands/start.ts";
import { tokenCommand } from "./commands/token.ts";
import { verifyCommand } from "./commands/verify.ts";
import { workflowsCommand } from "./commands/workflows.ts";
import { processOutput, failureLines, type Output } from "./output.ts";
import { parseCommandLine, UsageError } from "./usage.ts";
import { versionLines } from "./version.ts";

/** Every command, in the order `annal --help` lists them. */
export const COMMANDS: readonly Command[] = [
  startCommand,
  replayCommand,
  importCommand,
  failedWorkCommand,
  hooksCommand,
  tokenCommand,
  workflowsCommand,
  sessionsCommand,
  accessCommand,
  verifyCommand,
];

/** What `annal --help` prints. */
export const USAGE = `usage: annal <command> [options]

commands:
${COMMANDS.map((command) => command.usage).join("\n")}
  --version [--json]
      print the version and the source commit

The configuration is --config, else $ANNAL_CONFIG, else ./annal.toml, else the demo.`;

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
    const { values } = parseCommandLine(
      argv,
      {
        version: { type: "boolean" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      { min: 0, max: 0, what: "" },
    );
    if (values.help) return printUsage(output);
    if (values.version) {
      for (const line of await versionLines(values.json === true)) output.out(line);
      return 0;
    }
    throw new UsageError(`${name} needs a command, or is not an option of annal`);
  }
  if (name === "help") return printUsage(output);
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (!command) throw new UsageError(`unknown command "${name}"`);
  return command.run(rest, output);
}

function printUsage(output: Output): number {
  output.out(USAGE);
  return 0;
}
