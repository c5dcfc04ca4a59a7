/**
 * The history as Parquet files for analytics (DuckDB, Spark, warehouses): the log's events,
 * the change feed, the entries' versions as a slowly-changing dimension, memberships as
 * intervals, workflow instances and their steps. Written from the projections and the log by
 * log position, incrementally into a folder (`extractToFolder`), or one table whole to a
 * stream (`extractTable`). docs/analytics.md is the analyst's guide.
 */
export {
  DEFAULT_BATCH_SIZE,
  DEFAULT_ROWS_PER_FILE,
  extractToFolder,
  type ExtractOptions,
  type ExtractReport,
} from "./run.ts";
export { extractTable, type ExtractTableOptions } from "./stream.ts";
export { MANIFEST_FILE, readManifest, type Manifest } from "./manifest.ts";
export { isTableName, TABLE_NAMES, type TableName } from "./tables.ts";
