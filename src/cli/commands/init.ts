import { initProject } from "../../starter/index.ts";
import type { CommandModule } from "../command.ts";
import { INIT } from "../registry.ts";
import { parseCommandLine } from "../usage.ts";

export const command: CommandModule = {
  async run(args, output) {
    const { values, positionals } = parseCommandLine(args, INIT);
    const dir = positionals[0]!;
    const files = await initProject({
      dir,
      ...(values.annal ? { annal: values.annal } : {}),
      say: (line) => output.err(`annal: ${line}`),
    });
    for (const file of files) output.out(`wrote ${file}`);
    output.out(`next: cd ${dir} && npm install && npm test && npm start`);
    return 0;
  },
};
