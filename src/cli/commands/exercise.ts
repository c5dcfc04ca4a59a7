import { AnnalError, isAnnalError } from "../../errors/index.ts";
import { listProgress, runExercise } from "../../starter/index.ts";
import type { CommandModule } from "../command.ts";
import { EXERCISE } from "../registry.ts";
import { parseCommandLine } from "../usage.ts";

export const command: CommandModule = {
  async run(args, output) {
    const { values, positionals } = parseExerciseLine(args);
    const cwd = process.cwd();
    if (values.list) {
      await listProgress(cwd, undefined, output.out);
      return 0;
    }
    await runExercise({
      cwd,
      ...(positionals[0] === undefined ? {} : { selector: positionals[0] }),
      out: output.out,
    });
    return 0;
  },
};

/** The command line, its complaints as `ANNAL_EXERCISE_ARGUMENT` (the spec's code for them). */
function parseExerciseLine(args: readonly string[]) {
  try {
    return parseCommandLine(args, EXERCISE);
  } catch (error) {
    if (!isAnnalError(error) || error.code !== "ANNAL_USAGE") throw error;
    throw new AnnalError(
      "ANNAL_EXERCISE_ARGUMENT",
      error.message.replace(/^unexpected argument/, "one task at a time; unexpected argument"),
    );
  }
}
