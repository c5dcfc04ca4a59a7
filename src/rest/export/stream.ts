import { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import Cursor from "pg-cursor";
import type { PoolClient } from "../../db/index.ts";
import { assertAccess, callerOf } from "../../auth/index.ts";
import type { RestContext } from "../context.ts";
import { RestError } from "../errors.ts";
import type { SearchRow } from "../search/page.ts";
import type { SearchSql } from "../search/sql.ts";
import { contentDisposition } from "./filename.ts";
import { beginSignedExport, type SignedExport } from "./sign.ts";
import type { ExportFormat, ExportShape } from "./types.ts";

/** Bytes buffered between the database and the socket before reading pauses. */
const HIGH_WATER_MARK = 64 * 1024;

export interface ExportRequest {
  readonly sql: SearchSql;
  readonly shape: ExportShape;
  readonly format: ExportFormat;
  readonly options: unknown;
  readonly filename: string;
  /** Sign it (`export={"sign":true}`): see `beginSignedExport`. */
  readonly sign?: boolean;
}

/** An export that would hold more rows than `[rest.export] maxRows`. */
export class ExportTooLargeError extends RestError {
  constructor(maxRows: number) {
    super("ANNAL_EXPORT_TOO_LARGE", `the export would hold more than ${maxRows} rows`, {
      hint: "narrow it with a filter, or raise [rest.export] maxRows",
      details: { maxRows },
    });
  }
}

/**
 * Streams a whole search result as a file. Rows come from a database cursor, `batchSize` at
 * a time, and are written as they come: a batch is read only when the client has taken what
 * came before (the stream's high-water mark), so memory stays flat however many rows there
 * are and a slow client slows the reading instead of filling memory.
 *
 * Everything that can refuse the export (access, the concurrency bound, the row limit, the
 * first batch) happens before the status line is sent, so those failures are proper problem
 * responses; a failure later can only cut the transfer short.
 */
export async function sendExport(
  context: RestContext,
  request: FastifyRequest,
  reply: FastifyReply,
  job: ExportRequest,
): Promise<FastifyReply> {
  assertAccess(callerOf(request), "export");
  const release = context.exports.enter();
  let client: PoolClient | undefined;
  let cursor: Cursor<SearchRow> | undefined;
  let signed: SignedExport | undefined;
  const cleanUp = async () => {
    try {
      await cursor?.close();
      // A signed export read in a transaction of its own (read only: nothing to keep).
      if (signed) await client?.query("ROLLBACK");
    } catch {
      // the connection may be gone already; releasing it below discards it
    }
    client?.release();
    client = undefined;
    release();
  };
  try {
    const { maxRows, batchSize } = context.config.export;
    const { sql } = job;
    if (maxRows > 0) {
      const params = sql.params.slice(0, sql.whereParams);
      params.push(maxRows + 1);
      const counted = await context.pool.query<{ count: number }>(
        `SELECT count(*)::bigint AS count FROM (SELECT 1 FROM ${sql.source} WHERE ${sql.where} LIMIT $${params.length}) AS capped`,
        params,
      );
      if ((counted.rows[0]?.count ?? 0) > maxRows) throw new ExportTooLargeError(maxRows);
    }
    const key = job.sign ? await context.signingKey() : undefined;
    const connection = await context.pool.connect();
    client = connection;
    if (key) signed = await beginSignedExport(connection, key);
    const reading = connection.query(
      new Cursor<SearchRow>(
        `SELECT * FROM (${sql.inner}) AS q ORDER BY ${sql.orderBy("forward")}`,
        sql.params,
      ),
    );
    cursor = reading;
    const first = await reading.read(batchSize);
    const writer = job.format.writer(job.shape, job.options);
    async function* chunks(): AsyncGenerator<string> {
      try {
        if (writer.head !== "") yield writer.head;
        let batch = first;
        while (batch.length > 0) {
          yield writer.rows(batch);
          if (batch.length < batchSize) break;
          batch = await reading.read(batchSize);
        }
        if (writer.tail !== "") yield writer.tail;
      } finally {
        await cleanUp();
      }
    }
    const source = signed ? signed.sign(chunks(), reply.raw) : chunks();
    const body = Readable.from(source, { objectMode: false, highWaterMark: HIGH_WATER_MARK });
    if (signed) reply.headers(signed.headers);
    return reply
      .header("content-type", job.format.contentType(job.options))
      .header("content-disposition", contentDisposition(job.filename))
      .header("cache-control", "no-store")
      .header("x-content-type-options", "nosniff")
      .send(body);
  } catch (error) {
    await cleanUp();
    throw error;
  }
}
