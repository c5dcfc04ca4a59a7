import type { PoolClient } from "../db/index.ts";
import type { DirectorySchema } from "../directory/index.ts";
import { START, type LogPosition } from "../store/index.ts";
import { attributeColumns } from "./attributes.ts";
import type { ByteSink } from "./parquet.ts";
import { ThreadedRowGroups } from "./parquet-thread.ts";
import { DEFAULT_BATCH_SIZE } from "./run.ts";
import { EXTRACT_TABLES, type RowPart, type TableName } from "./tables.ts";
import { readBatches } from "./write.ts";

export interface ExtractTableOptions {
  readonly schema?: DirectorySchema;
  readonly batchSize?: number;
}

/**
 * One table whole, as one Parquet file, into `sink`: every row up to the position its source
 * holds (returned), one row group a batch. `client` must be in a transaction of its own
 * (repeatable read, so that the parts of a table agree), which the caller ends.
 *
 * Separate from `extractToFolder`: a download has no folder to continue, so it is the first
 * run's content (closed rows, then open ones) in one file.
 */
export async function extractTable(
  client: PoolClient,
  name: TableName,
  sink: ByteSink,
  options: ExtractTableOptions = {},
): Promise<{ covered: LogPosition; rows: number }> {
  const table = EXTRACT_TABLES[name];
  const context = {
    attributes: name === "entry_versions" ? await attributeColumns(client, options.schema) : [],
  };
  const covered = await table.covered(client);
  const file = new ThreadedRowGroups(table.columns(context), sink, {
    "annal.table": name,
    "annal.covered": `${covered.transactionId}/${covered.position}`,
  });
  const parts: RowPart[] = table.shape === "append" ? ["rows"] : ["closed", "open"];
  try {
    for (const part of parts) {
      const query = table.query(part, START, covered, context);
      for await (const batch of readBatches(
        client,
        table,
        query,
        context,
        options.batchSize ?? DEFAULT_BATCH_SIZE,
      )) {
        await file.write(batch);
      }
    }
    await file.finish();
  } catch (error) {
    file.abort();
    throw error;
  }
  return { covered, rows: file.rows };
}
