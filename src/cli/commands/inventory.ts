/** `annal inventory`: the stored workflow definitions, and which bundle each name runs. */
import { openDatabase, prepareEventStore } from "../../app/index.ts";
import { loadConfig } from "../../config/index.ts";
import { AnnalError } from "../../errors/index.ts";
import { createLogger } from "../../logger.ts";
import { definitionInventory, type DefinitionVersion } from "../../workflow/index.ts";
import type { CommandModule } from "../command.ts";
import type { Output } from "../output.ts";
import { INVENTORY } from "../scenario-usages.ts";
import { columns } from "../table.ts";
import { parseCommandLine, UsageError } from "../usage.ts";

export const command: CommandModule = {
  run(args, output) {
    const { values, positionals } = parseCommandLine(args, INVENTORY);
    return inventory({ ...values, ...(positionals[0] ? { name: positionals[0] } : {}) }, output);
  },
};

const HASH = /^[0-9a-f]{64}$/;

/** A stored version and whether it runs: `current` (new instances start it), `running` (older, with live instances) or `retired`. */
export interface InventoryRow extends DefinitionVersion {
  readonly state: "current" | "running" | "retired";
}

/**
 * `annal inventory [<name>[@<version>]] [--json]`: every stored definition version with its
 * bundle hash and state; with a name, the one bundle that name runs.
 *
 * @throws AnnalError `ANNAL_BUNDLE_HASH_MISSING` when a stored definition has no bundle hash
 *   (the others are printed first); `ANNAL_INVENTORY_AMBIGUOUS` when the named workflow runs in
 *   more than one version; `ANNAL_WORKFLOW_NOT_DEPLOYED` for a name (or version) not stored.
 */
export async function inventory(
  options: { name?: string; json?: boolean; config?: string },
  output: Output,
): Promise<number> {
  const wanted = options.name === undefined ? undefined : parseName(options.name);
  const config = await loadConfig({ configPath: options.config, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  let rows: InventoryRow[];
  try {
    await prepareEventStore(database.pool, log);
    rows = withStates(await definitionInventory(database.pool));
  } finally {
    await database.close();
  }
  const missing = rows.filter((row) => !HASH.test(row.hash ?? ""));
  let shown = rows;
  if (wanted !== undefined) {
    shown = rows.filter(
      (row) =>
        row.name === wanted.name &&
        (wanted.version === undefined ? row.state !== "retired" : row.version === wanted.version),
    );
    if (shown.length === 0) {
      throw new AnnalError(
        "ANNAL_WORKFLOW_NOT_DEPLOYED",
        `no stored workflow definition ${options.name}`,
      );
    }
    if (shown.length > 1) {
      throw new AnnalError(
        "ANNAL_INVENTORY_AMBIGUOUS",
        `${wanted.name} runs in ${shown.length} versions: ${shown.map((r) => `${r.name}@${r.version} (${r.state}, ${r.hash})`).join(", ")}`,
        { hint: `name the version: annal inventory ${wanted.name}@${shown[0]!.version}` },
      );
    }
  }
  print(
    shown.filter((row) => !missing.includes(row)),
    options.json === true,
    output,
  );
  const broken = missing.filter((row) => shown.includes(row));
  if (broken.length > 0) {
    throw new AnnalError(
      "ANNAL_BUNDLE_HASH_MISSING",
      `stored without a bundle hash: ${broken.map((r) => `${r.name}@${r.version}`).join(", ")}`,
    );
  }
  return 0;
}

/** Each version's state: the highest version of a name is current, as the engine starts it. */
function withStates(versions: readonly DefinitionVersion[]): InventoryRow[] {
  const highest = new Map<string, number>();
  for (const v of versions) highest.set(v.name, Math.max(highest.get(v.name) ?? 0, v.version));
  return versions.map((v) => ({
    ...v,
    state:
      highest.get(v.name) === v.version ? "current" : (v.live ?? 0) > 0 ? "running" : "retired",
  }));
}

function parseName(text: string): { name: string; version?: number } {
  const match = /^([^@\s]+)(?:@(\d{1,9}))?$/.exec(text);
  if (!match) throw new UsageError(`${text}: expected a workflow's name, or <name>@<version>`);
  return { name: match[1]!, ...(match[2] === undefined ? {} : { version: Number(match[2]) }) };
}

function print(rows: readonly InventoryRow[], json: boolean, output: Output): void {
  if (json) {
    for (const row of rows) output.out(JSON.stringify(row));
    return;
  }
  if (rows.length === 0) {
    output.out("no workflow is stored; annal start deploys the definitions of [workflows] dir");
    return;
  }
  const table = rows.map((r) => [
    r.name,
    String(r.version),
    r.hash,
    r.state,
    r.live === null ? "-" : String(r.live),
    r.file,
  ]);
  for (const line of columns(["name", "version", "hash", "state", "live", "file"], table)) {
    output.out(line);
  }
}
