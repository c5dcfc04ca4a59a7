/** `annal workflows list`: the deployed workflow definitions, their hashes and live instances. */
import { openDatabase, prepareEventStore } from "../../app/index.ts";
import { loadConfig } from "../../config/index.ts";
import { createLogger } from "../../logger.ts";
import { definitionInventory } from "../../workflow/index.ts";
import type { CommandModule } from "../command.ts";
import { WORKFLOWS_LIST } from "../registry.ts";
import type { Output } from "../output.ts";
import { parseCommandLine, UsageError } from "../usage.ts";

export const command: CommandModule = {
  run(args, output) {
    const [sub, ...rest] = args;
    if (sub !== "list") throw new UsageError("workflows needs list");
    const { values } = parseCommandLine(rest, WORKFLOWS_LIST);
    return workflowsList(values, output);
  },
};

export async function workflowsList(
  options: { config?: string; json?: boolean },
  output: Output,
): Promise<number> {
  const config = await loadConfig({ configPath: options.config, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  try {
    await prepareEventStore(database.pool, log);
    const versions = await definitionInventory(database.pool);
    if (options.json) {
      for (const version of versions) output.out(JSON.stringify(version));
      return 0;
    }
    if (versions.length === 0) {
      output.out("no workflow is deployed; annal start deploys the definitions of [workflows] dir");
      return 0;
    }
    const rows = versions.map((v) => [
      v.name,
      String(v.version),
      v.hash,
      v.live === null ? "-" : String(v.live),
      v.deployedAt.toISOString(),
      v.file,
    ]);
    const header = ["name", "version", "hash", "live", "deployed at", "file"];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const line = (cells: string[]) =>
      cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ");
    for (const row of [header, ...rows]) output.out(line(row));
    return 0;
  } finally {
    await database.close();
  }
}
