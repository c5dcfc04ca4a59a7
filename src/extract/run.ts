import { createHash } from "node:crypto";
import { mkdir, open, rm } from "node:fs/promises";
import path from "node:path";
import type { Pool, PoolClient } from "../db/index.ts";
import type { DirectorySchema } from "../directory/index.ts";
import { AnnalError } from "../errors/index.ts";
import {
  comparePositions,
  databaseIdentity,
  logPositionCompare,
  START,
  type LogPosition,
} from "../store/index.ts";
import { attributeColumns } from "./attributes.ts";
import {
  invalidManifest,
  MANIFEST_FORMAT,
  readManifest,
  writeManifest,
  type Manifest,
  type RunRecord,
  type TableManifest,
} from "./manifest.ts";
import {
  EXTRACT_TABLES,
  TABLE_NAMES,
  type ExtractContext,
  type RowPart,
  type TableName,
} from "./tables.ts";
import { readBatches, writeEmptyFile, writeSplitFiles } from "./write.ts";

/** The lock file that keeps a second run out of a folder. */
export const LOCK_FILE = "annal-extract.lock";

/**
 * Event types after which every earlier file may hold what the log no longer does: an
 * erasure's values, or history before a retention horizon. The next run writes the folder
 * again from the log as it now is, and removes the old files.
 */
const REWRITE_AFTER: Readonly<Record<string, string>> = {
  EntryErased: "an erasure",
  LogRetained: "a retention run",
};

export interface ExtractOptions {
  /** The folder; made if missing. */
  readonly dir: string;
  /** The tables to extract (default all). */
  readonly tables?: readonly TableName[];
  /** Rows in one file at most (default 1,000,000); a table's rows of a run go on in the next. */
  readonly rowsPerFile?: number;
  /** Rows read from the database at once, and in one row group (default 10,000). */
  readonly batchSize?: number;
  /** The directory's schema, for typed attribute columns; without it, lists of strings. */
  readonly schema?: DirectorySchema;
  /** Rows written so far of a table's part, of `total`. */
  readonly onProgress?: (phase: string, done: number, total: number) => void;
}

export interface ExtractReport {
  readonly run: number;
  readonly rewrite?: string;
  readonly tables: readonly {
    readonly name: TableName;
    readonly covered: LogPosition;
    readonly rows: number;
    readonly files: readonly string[];
  }[];
  /** Files this run removed: open rows written again, or every file of a rewrite. */
  readonly removed: readonly string[];
}

export const DEFAULT_ROWS_PER_FILE = 1_000_000;
export const DEFAULT_BATCH_SIZE = 10_000;

/** What the manifest records of the database: a digest, so the identity is never written. */
function databaseDigest(identity: string): string {
  return createHash("sha256").update(`annal extract\n${identity}`).digest("hex").slice(0, 32);
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

/**
 * Why the folder must be written again from the start, if it must: an erasure or a retention
 * run recorded after the earliest position the folder covers.
 */
async function rewriteReason(client: PoolClient, manifest: Manifest): Promise<string | undefined> {
  if (manifest.format !== MANIFEST_FORMAT) return `a new manifest format (${MANIFEST_FORMAT})`;
  const covered = Object.values(manifest.tables).map((table) => table.covered);
  const earliest = covered.sort(comparePositions)[0] ?? START;
  const params: unknown[] = [Object.keys(REWRITE_AFTER)];
  const found = await client.query<{ type: string }>(
    `SELECT e.type FROM events AS e
      WHERE e.type = ANY($1) AND ${logPositionCompare("e", ">", earliest, params)} LIMIT 1`,
    params,
  );
  const type = found.rows[0]?.type;
  return type === undefined ? undefined : `${REWRITE_AFTER[type]} was recorded since`;
}

async function takeLock(dir: string): Promise<() => Promise<void>> {
  const file = path.join(dir, LOCK_FILE);
  try {
    const handle = await open(file, "wx");
    await handle.write(`${process.pid}\n`);
    await handle.close();
  } catch (error) {
    if ((error as { code?: string }).code !== "EEXIST") throw error;
    throw new AnnalError(
      "ANNAL_EXTRACT_IN_PROGRESS",
      `${file} exists: another extract is writing into ${dir}`,
    );
  }
  return () => rm(file, { force: true });
}

/**
 * Writes the history as Parquet into `dir`, incrementally: each table's files cover the log up
 * to the position its manifest entry records, and a run writes only what came after it.
 *
 * - Append-only tables (`events`, `changes`): the rows after the covered position.
 * - Tables whose rows change (`entry_versions`, `memberships`, `workflow_instances`,
 *   `workflow_steps`): a row is written for good (`closed-…`) by the run that sees it end
 *   (the version's next version, the membership's end, the instance finished); rows still open
 *   are written into `open-…` files, which each run replaces with the rows open then.
 *
 * So `<table>/*.parquet` holds every row once, between runs; the files the manifest lists are
 * exactly those. Everything is read in one repeatable-read snapshot, each table up to the
 * position its source holds in it (a projection's checkpoint, the events' safe bound). After
 * an erasure or a retention run, the run writes the folder again from the start and removes
 * the earlier files, so no file keeps what the log no longer holds (docs/analytics.md).
 *
 * @example
 * const report = await extractToFolder(pool, { dir: "extracts", schema });
 * // DuckDB: SELECT * FROM read_parquet('extracts/entry_versions/*.parquet', union_by_name = true)
 */
export async function extractToFolder(pool: Pool, options: ExtractOptions): Promise<ExtractReport> {
  const dir = path.resolve(options.dir);
  const rowsPerFile = options.rowsPerFile ?? DEFAULT_ROWS_PER_FILE;
  const batchSize = Math.min(options.batchSize ?? DEFAULT_BATCH_SIZE, rowsPerFile);
  const names = options.tables ?? TABLE_NAMES;
  await mkdir(dir, { recursive: true });
  const unlock = await takeLock(dir);
  /** Every file this run finished, removed again if the run fails: the manifest names none. */
  const created: string[] = [];
  let recorded = false;
  const client = await pool.connect();
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const database = databaseDigest(await databaseIdentity(client));
    const manifest = await readManifest(dir);
    if (manifest && manifest.database !== database) {
      throw invalidManifest(dir, "was written from another database");
    }
    const run = (manifest?.run ?? 0) + 1;
    const rewrite = manifest ? await rewriteReason(client, manifest) : undefined;
    const previous = rewrite === undefined ? manifest : undefined;
    const context: ExtractContext = {
      attributes: names.some((name) => name === "entry_versions")
        ? await attributeColumns(client, options.schema)
        : [],
    };
    const tables: Partial<Record<TableName, TableManifest>> = { ...previous?.tables };
    const written: Partial<Record<TableName, { files: string[]; rows: number }>> = {};
    const removed: string[] =
      rewrite && manifest ? Object.values(manifest.tables).flatMap((t) => t.files) : [];
    const report: ExtractReport["tables"][number][] = [];
    for (const name of names) {
      const table = EXTRACT_TABLES[name];
      const before = previous?.tables[name];
      const after = before?.covered ?? START;
      const covered = await table.covered(client);
      if (before && comparePositions(covered, after) <= 0) {
        report.push({ name, covered: after, rows: 0, files: [] });
        continue;
      }
      await mkdir(path.join(dir, name), { recursive: true });
      const parts: RowPart[] = table.shape === "append" ? ["rows"] : ["closed", "open"];
      const files: string[] = [];
      const open: string[] = [];
      let rows = 0;
      let openRows = 0;
      for (const part of parts) {
        const query = table.query(part, after, covered, context);
        const phase = table.shape === "append" ? name : `${name} (${part})`;
        let total = 0;
        if (options.onProgress) {
          const counted = await client.query<{ count: string }>(
            `SELECT count(*) AS count FROM (${query.sql}) AS q`,
            query.params,
          );
          total = Number(counted.rows[0]?.count ?? 0);
          options.onProgress(phase, 0, total);
        }
        const result = await writeSplitFiles(
          readBatches(client, table, query, context, batchSize),
          {
            folder: path.join(dir, name),
            fileName: (n) => `${part}-r${pad(run, 6)}-${pad(n, 4)}.parquet`,
            columns: table.columns(context),
            rowsPerFile,
            metadata: {
              "annal.table": name,
              "annal.part": part,
              "annal.run": String(run),
              "annal.after": `${after.transactionId}/${after.position}`,
              "annal.covered": `${covered.transactionId}/${covered.position}`,
            },
            onRows: (done) => options.onProgress?.(phase, done, Math.max(total, done)),
            onFile: (file) => created.push(path.join(name, file)),
          },
        );
        const named = result.files.map((file) => `${name}/${file}`);
        files.push(...named);
        if (part === "open") {
          open.push(...named);
          openRows = result.rows;
        }
        rows += result.rows;
      }
      const kept = (before?.files ?? []).filter((file) => !before?.open.includes(file));
      if (kept.length === 0 && files.length === 0) {
        // No row yet: one empty file (the columns, no row), so that a reader's glob finds the
        // table; an open file, replaced by the next run.
        const empty = `open-r${pad(run, 6)}-0001.parquet`;
        await writeEmptyFile(path.join(dir, name), empty, table.columns(context), {
          "annal.table": name,
          "annal.run": String(run),
          "annal.covered": `${covered.transactionId}/${covered.position}`,
        });
        created.push(path.join(name, empty));
        files.push(`${name}/${empty}`);
        open.push(`${name}/${empty}`);
      }
      removed.push(...(before?.open ?? []));
      const keptRows = before ? before.rows - before.openRows : 0;
      tables[name] = { covered, files: [...kept, ...files], open, rows: keptRows + rows, openRows };
      written[name] = { files, rows };
      report.push({ name, covered, rows, files });
    }
    const record: RunRecord = {
      run,
      at: new Date().toISOString(),
      ...(rewrite === undefined ? {} : { rewrite }),
      tables: written,
    };
    await writeManifest(dir, {
      format: MANIFEST_FORMAT,
      database,
      run,
      tables,
      runs: [...(previous?.runs ?? manifest?.runs ?? []), record],
    });
    recorded = true;
    await client.query("COMMIT");
    for (const file of removed) await rm(path.join(dir, file), { force: true });
    return { run, ...(rewrite === undefined ? {} : { rewrite }), tables: report, removed };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    if (!recorded) for (const file of created) await rm(path.join(dir, file), { force: true });
    throw error;
  } finally {
    client.release();
    await unlock();
  }
}
