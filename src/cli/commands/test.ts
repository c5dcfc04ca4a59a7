import { runProjectTests } from "../../starter/index.ts";
import type { CommandModule } from "../command.ts";
import { TEST } from "../registry.ts";
import { parseCommandLine } from "../usage.ts";

export const command: CommandModule = {
  async run(args, output) {
    const { positionals } = parseCommandLine(args, TEST);
    await runProjectTests({
      cwd: process.cwd(),
      ...(positionals[0] === undefined ? {} : { pattern: positionals[0] }),
      out: output.out,
    });
    return 0;
  },
};
