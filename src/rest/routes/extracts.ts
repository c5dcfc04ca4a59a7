import { once } from "node:events";
import { PassThrough } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { assertAccess, callerOf } from "../../auth/index.ts";
import { extractTable, isTableName, TABLE_NAMES } from "../../extract/index.ts";
import type { RestContext } from "../context.ts";
import { RestError } from "../errors.ts";
import { contentDisposition } from "../export/filename.ts";

/** Parquet's media type (registered with IANA in 2024). */
export const PARQUET_MEDIA_TYPE = "application/vnd.apache.parquet";

/** Bytes buffered between the writer and the socket before writing waits. */
const HIGH_WATER_MARK = 256 * 1024;

/**
 * `GET /api/extracts/{table}.parquet`: one table of the history whole, as one Parquet file,
 * streamed as it is written (a row group at a time, memory flat): what `annal extract` writes
 * on a first run, in one file. Needs the `export` access function, and takes a place among the
 * exports one process streams (`[rest.export] maxConcurrent`), like an export does. Everything
 * that can refuse it happens before the status line; a failure later cuts the file short,
 * which a Parquet reader notices (the footer is missing).
 */
export async function answerExtract(
  context: RestContext,
  request: FastifyRequest,
  reply: FastifyReply,
  file: string,
): Promise<FastifyReply> {
  assertAccess(callerOf(request), "export");
  const name = file.endsWith(".parquet") ? file.slice(0, -".parquet".length) : file;
  if (!isTableName(name) || !file.endsWith(".parquet")) {
    throw new RestError("ANNAL_EXTRACT_TABLE_UNKNOWN", `no extract is named "${file}"`, {
      details: { table: file, tables: TABLE_NAMES.map((table) => `${table}.parquet`) },
    });
  }
  const release = context.exports.enter();
  let client;
  try {
    client = await context.pool.connect();
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  } catch (error) {
    client?.release();
    release();
    throw error;
  }
  const connection = client;
  const body = new PassThrough({ highWaterMark: HIGH_WATER_MARK });
  const sink = async (bytes: Uint8Array) => {
    if (body.destroyed) throw new Error("the client went away");
    if (!body.write(bytes)) {
      await Promise.race([once(body, "drain"), once(body, "close")]);
      if (body.destroyed) throw new Error("the client went away");
    }
  };
  void extractTable(connection, name, sink, {
    ...(context.schema ? { schema: context.schema } : {}),
    batchSize: context.config.export.batchSize,
  })
    .then(
      () => body.end(),
      (error: unknown) => {
        if (!body.destroyed) context.log.error({ err: error, table: name }, "extract failed");
        body.destroy(error instanceof Error ? error : new Error(String(error)));
      },
    )
    .finally(async () => {
      await connection.query("ROLLBACK").catch(() => {});
      connection.release();
      release();
    });
  return reply
    .header("content-type", PARQUET_MEDIA_TYPE)
    .header("content-disposition", contentDisposition(`${name}.parquet`))
    .header("cache-control", "no-store")
    .header("x-content-type-options", "nosniff")
    .send(body);
}
