/**
 * `annal --help` and `annal <command> [<subcommand>] --help|-h`, written from the commands'
 * declared usages (`Command.usages`), so the help and the parsers never disagree.
 */
import type { Command, Usage } from "./command.ts";

/** Whether `args` ask for help: `--help` or `-h` before a `--` that ends the options. */
export function asksForHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === "--") return false;
    if (arg === "--help" || arg === "-h") return true;
  }
  return false;
}

/** One usage as `annal --help` lists it: the synopsis, then its description indented. */
export function usageLines(usage: Usage): string[] {
  const synopsis = [...usage.words, usage.synopsis].filter((part) => part !== "").join(" ");
  return [`  ${synopsis}`, ...usage.description.split("\n").map((line) => `      ${line}`)];
}

/**
 * What `annal <command> [<subcommand>] --help` prints: the subcommand's usage when `args`
 * name one of the command's subcommands, else every usage of the command (its usage without a
 * subcommand first, when it has one).
 */
export function commandHelp(command: Command, args: readonly string[]): string[] {
  const named = command.usages.find((usage) => usage.words[1] === args[0]);
  if (named) return ownHelp(named);
  if (command.usages.length === 1) return ownHelp(command.usages[0]!);
  // A command that also runs without a subcommand (`annal simulate <file>`): that usage first.
  const bare = command.usages.find((usage) => usage.words.length === 1);
  if (bare) {
    const others = command.usages.filter((usage) => usage !== bare);
    return [...ownHelp(bare), "", "subcommands:", ...others.flatMap(usageLines)];
  }
  return [
    `usage: annal ${command.name} <subcommand> [options]`,
    "",
    "subcommands:",
    ...command.usages.flatMap(usageLines),
  ];
}

/** One usage on its own: `usage: annal <synopsis>`, then what it does. */
function ownHelp(usage: Usage): string[] {
  const [synopsis, ...description] = usageLines(usage);
  return [
    `usage: annal ${synopsis!.trimStart()}`,
    "",
    ...description.map((line) => line.replace(/^ {6}/, "")),
  ];
}

/** What `annal --help` prints: every command's usages, then the options of `annal` itself. */
export function topLevelHelp(commands: readonly Command[], own: readonly Usage[]): string {
  return [
    "usage: annal <command> [options]",
    "",
    "commands:",
    ...commands.flatMap((command) => command.usages.flatMap(usageLines)),
    ...own.flatMap(usageLines),
    "",
    "annal <command> --help (or -h) prints one command's usage.",
    "The configuration is --config, else $ANNAL_CONFIG, else ./annal.toml, else the demo.",
  ].join("\n");
}
