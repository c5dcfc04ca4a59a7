import pluralize from "pluralize";
import { openDatabase, prepareEventStore, startDirectory } from "../../app/index.ts";
import { loadConfig } from "../../config/index.ts";
import type { DirectorySchema } from "../../directory/index.ts";
import {
  DEFAULT_ROWS_PER_FILE,
  extractToFolder,
  isTableName,
  TABLE_NAMES,
  type TableName,
} from "../../extract/index.ts";
import { createLogger } from "../../logger.ts";
import type { CommandModule } from "../command.ts";
import type { Output } from "../output.ts";
import { EXTRACT } from "../registry.ts";
import { parseCommandLine, UsageError } from "../usage.ts";
import { phaseProgress } from "./phase-progress.ts";

function tablesOf(text: string | undefined): readonly TableName[] {
  if (text === undefined) return TABLE_NAMES;
  const names = text
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  const unknown = names.filter((name) => !isTableName(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new UsageError(
      `--tables: ${unknown.length > 0 ? `no table ${unknown.join(", ")}` : "name a table"}; the tables are ${TABLE_NAMES.join(", ")}`,
    );
  }
  return names as TableName[];
}

function rowsPerFileOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_ROWS_PER_FILE;
  const rows = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(rows) || rows < 1) {
    throw new UsageError(`--rows-per-file: "${text}" is not a whole number of rows, 1 or more`);
  }
  return rows;
}

/**
 * `annal extract <dir>`: the history as Parquet into a folder, incrementally (see
 * `extractToFolder`), with a progress bar per table on standard error; prints what each table
 * got and the log position it covers. The directory's schema types the attribute columns when
 * the directory answers (a running annal's demo directory too); otherwise every attribute is a
 * list of strings, and it says so.
 */
async function runExtract(args: readonly string[], output: Output): Promise<number> {
  const { values, positionals } = parseCommandLine(args, EXTRACT);
  const tables = tablesOf(values.tables);
  const rowsPerFile = rowsPerFileOf(values["rows-per-file"]);
  const config = await loadConfig({ configPath: values.config, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  const progress = phaseProgress(() => "rows");
  try {
    const store = await prepareEventStore(database.pool, log);
    let schema: DirectorySchema | undefined;
    if (config.directory && tables.includes("entry_versions")) {
      const directory = await startDirectory({
        config,
        pool: database.pool,
        store,
        parts: [],
        log: log.child({}, { level: "silent" }),
        startDemo: false,
      });
      schema = directory.schema;
      await directory.stop();
      if (!schema) {
        output.err(
          `annal: the directory at ${config.directory.url} did not answer: attributes are extracted as lists of strings`,
        );
      }
    }
    const report = await extractToFolder(database.pool, {
      dir: positionals[0]!,
      tables,
      rowsPerFile,
      ...(schema ? { schema } : {}),
      onProgress: (phase, done, total) => progress.update(phase, done, total),
    });
    progress.stop();
    if (report.rewrite) output.out(`run ${report.run} wrote everything again: ${report.rewrite}`);
    for (const table of report.tables) {
      const at = `${table.covered.transactionId}/${table.covered.position}`;
      output.out(
        `${table.name}: ${pluralize("row", table.rows, true)} in ${pluralize("file", table.files.length, true)}, up to log position ${at}`,
      );
    }
    output.out(
      `run ${report.run} into ${positionals[0]}: ${pluralize("file", report.removed.length, true)} replaced`,
    );
    return 0;
  } finally {
    progress.stop();
    await database.close();
  }
}

export const command: CommandModule = { run: runExtract };
