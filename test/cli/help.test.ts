import t from "tap";
import { asksForHelp } from "../../src/cli/help.ts";
import { main, USAGE } from "../../src/cli/main.ts";
import { COMMANDS } from "../../src/cli/registry.ts";
import { capturedOutput, runAnnal } from "./support.ts";

/** Every command line that asks for help: each usage, and each command with subcommands. */
const HELP_CASES: { words: readonly string[]; expect: string }[] = COMMANDS.flatMap((command) => [
  ...command.usages.map((usage) => ({
    words: usage.words,
    expect: `usage: annal ${[...usage.words, usage.synopsis].join(" ")}\n`,
  })),
  // The command alone, when it has subcommands: all of them, or its only one; a command that
  // also runs without one (`simulate <file>`) prints that usage first (its case above).
  ...(command.usages.some((usage) => usage.words.length === 1) && command.usages.length > 1
    ? []
    : command.usages.length > 1
      ? [{ words: [command.name], expect: `usage: annal ${command.name} <subcommand> [options]\n` }]
      : command.usages[0]!.words.length > 1
        ? [{ words: [command.name], expect: `usage: annal ${command.usages[0]!.words.join(" ")} ` }]
        : []),
]);

/** Runs `tasks` at most `width` at a time: the machine's cores are shared. */
async function inBatches<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < tasks.length; i += width) {
    results.push(...(await Promise.all(tasks.slice(i, i + width).map((task) => task()))));
  }
  return results;
}

t.test("every command and subcommand prints its usage on --help and -h, exit 0", async (t) => {
  t.ok(HELP_CASES.some((c) => c.words.join(" ") === "token create"));
  t.ok(HELP_CASES.some((c) => c.words.join(" ") === "failed-work"));
  // The real CLI for --help (one process per case, four at a time: the cores are shared);
  // main() in this process for -h, which takes the same path once the process runs.
  const spawned = await inBatches(
    HELP_CASES.map(
      ({ words }) =>
        () =>
          runAnnal([...words, "--help"]),
    ),
    4,
  );
  for (const [i, { words, expect }] of HELP_CASES.entries()) {
    const run = spawned[i]!;
    const what = `annal ${words.join(" ")} --help`;
    t.equal(run.code, 0, what);
    t.equal(run.stderr, "", what);
    t.ok(run.stdout.startsWith(expect), `${what} starts with ${JSON.stringify(expect)}`);

    const { out, err, output } = capturedOutput();
    t.equal(await main([...words, "-h"], output), 0, `annal ${words.join(" ")} -h`);
    t.same(err, [], `annal ${words.join(" ")} -h`);
    t.equal(`${out.join("\n")}\n`, run.stdout, `annal ${words.join(" ")} -h is --help`);
  }
  const short = await runAnnal(["failed-work", "retry", "-h"]);
  t.equal(short.code, 0, short.stderr);
  t.match(short.stdout, /^usage: annal failed-work retry <id>/);
});

t.test("help wins over the command's other arguments, and -- ends the options", async (t) => {
  const run = await runAnnal(["token", "create", "--name", "x", "--frob", "-h"]);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /^usage: annal token create --name <name>/);
  t.equal(asksForHelp(["hooks", "send", "a/b", "--", "--help"]), false);
  const { out, output } = capturedOutput();
  t.equal(await main(["help", "token", "revoke"], output), 0, "annal help token revoke");
  t.match(out[0], /^usage: annal token revoke <name>/);
  t.equal(asksForHelp(["replay", "--help"]), true);
});

t.test("annal --help lists every usage the registry declares", async (t) => {
  for (const command of COMMANDS) {
    for (const usage of command.usages) {
      t.ok(
        USAGE.includes(`  ${[...usage.words, usage.synopsis].join(" ")}\n`),
        usage.words.join(" "),
      );
    }
  }
});

t.test("every option a command parses appears in its synopsis", async (t) => {
  for (const command of COMMANDS) {
    for (const usage of command.usages) {
      for (const name of Object.keys(usage.options)) {
        t.match(usage.synopsis, new RegExp(`--${name}\\b`), `${usage.words.join(" ")} --${name}`);
      }
      const words = usage.words.join(" ");
      t.equal(usage.words[0], command.name, words);
    }
  }
});
