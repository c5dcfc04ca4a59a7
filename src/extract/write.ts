import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import path from "node:path";
import type { PoolClient } from "../db/index.ts";
import { sliceBatch, type ColumnBatch } from "./columns.ts";
import { copyColumns } from "./copy-rows.ts";
import { ParquetRowGroups, type ByteSink, type ColumnSpec } from "./parquet.ts";
import { ThreadedRowGroups } from "./parquet-thread.ts";
import type { ExtractContext, ExtractQuery, ExtractTable } from "./tables.ts";

/**
 * The rows of `query`, `batchSize` at a time, column by column as the table's columns are:
 * read with `COPY`, which streams them while the previous batch is written (a cursor's
 * database waits for each batch to be asked for).
 */
export function readBatches(
  client: PoolClient,
  table: ExtractTable,
  query: ExtractQuery,
  context: ExtractContext,
  batchSize: number,
): AsyncGenerator<ColumnBatch> {
  return copyColumns(client, query, table.columns(context), batchSize);
}

/** A sink into a file stream that waits for the stream to drain. */
function streamSink(stream: NodeJS.WritableStream): ByteSink {
  return async (bytes) => {
    if (!stream.write(bytes)) await once(stream, "drain");
  };
}

export interface SplitFilesOptions {
  readonly folder: string;
  /** The name of the n-th file (from 1), relative to `folder`, e.g. `closed-r3-0001.parquet`. */
  readonly fileName: (n: number) => string;
  readonly columns: readonly ColumnSpec[];
  readonly rowsPerFile: number;
  readonly metadata: Readonly<Record<string, string>>;
  readonly onRows?: (rows: number) => void;
  /** A file finished (its name, relative to `folder`). */
  readonly onFile?: (name: string) => void;
}

/**
 * Writes batches of rows into Parquet files of at most `rowsPerFile` rows each (a batch is
 * split where a file fills), each file under a temporary name until its footer is written
 * (`*.parquet.partial`, which a reader's `*.parquet` glob does not see). Returns the files
 * written, relative to `folder`'s parent's own naming (`fileName`'s).
 */
export async function writeSplitFiles(
  batches: AsyncIterable<ColumnBatch>,
  options: SplitFilesOptions,
): Promise<{ files: string[]; rows: number }> {
  const files: string[] = [];
  let rows = 0;
  let open: { file: ThreadedRowGroups; stream: NodeJS.WritableStream; name: string } | undefined;
  const close = async () => {
    if (!open) return;
    const { file, stream, name } = open;
    // The last row group is encoded by `finish`, which may fail: the file stays open until
    // then, for the cleanup below.
    await file.finish();
    open = undefined;
    stream.end();
    await once(stream, "finish");
    await rename(path.join(options.folder, `${name}.partial`), path.join(options.folder, name));
    files.push(name);
    options.onFile?.(name);
  };
  try {
    for await (const batch of batches) {
      for (let start = 0; start < batch.rows;) {
        if (!open) {
          const name = options.fileName(files.length + 1);
          const stream = createWriteStream(path.join(options.folder, `${name}.partial`));
          open = {
            file: new ThreadedRowGroups(options.columns, streamSink(stream), options.metadata),
            stream,
            name,
          };
        }
        const end = Math.min(batch.rows, start + options.rowsPerFile - open.file.rows);
        const part = start === 0 && end === batch.rows ? batch : sliceBatch(batch, start, end);
        start = end;
        await open.file.write(part);
        rows += part.rows;
        options.onRows?.(rows);
        if (open.file.rows >= options.rowsPerFile) await close();
      }
    }
    await close();
  } finally {
    // A failed write leaves no partial file behind (the caller removes the finished ones,
    // which it hears of through `onFile`).
    if (open) {
      const { file, stream, name } = open;
      file.abort();
      stream.end();
      await once(stream, "close").catch(() => {});
      await rm(path.join(options.folder, `${name}.partial`), { force: true });
    }
  }
  return { files, rows };
}

/**
 * A Parquet file with `columns` and no row, under a temporary name until it is whole: what a
 * table with no row yet is written as, so that a reader's glob finds the table and its columns.
 */
export async function writeEmptyFile(
  folder: string,
  name: string,
  columns: readonly ColumnSpec[],
  metadata: Readonly<Record<string, string>>,
): Promise<void> {
  const stream = createWriteStream(path.join(folder, `${name}.partial`));
  const file = new ParquetRowGroups(columns, streamSink(stream), metadata);
  await file.finish();
  stream.end();
  await once(stream, "finish");
  await rename(path.join(folder, `${name}.partial`), path.join(folder, name));
}
