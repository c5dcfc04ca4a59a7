import pg from "pg";
import { to as copyTo } from "pg-copy-streams";
import type { PoolClient } from "../db/index.ts";
import { columnBuilder, readerFor, type ColumnBatch } from "./columns.ts";
import type { ColumnSpec } from "./parquet.ts";

/** A query's SQL and its parameters, as the extract's tables give them. */
export interface CopyQuery {
  readonly sql: string;
  readonly params: readonly unknown[];
}

const ESCAPES: Readonly<Record<string, string>> = {
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
};

/**
 * A field of `COPY … TO` in text format as it was: PostgreSQL writes a backslash before a
 * backslash, and `\b \f \n \r \t \v` for those characters (CopyAttributeOutText); nothing
 * else.
 */
export function unescapeCopyText(field: string): string {
  return field.indexOf("\\") < 0
    ? field
    : field.replace(/\\(.)/gs, (_, c: string) => ESCAPES[c] ?? c);
}

/** pg's conversion of a parameter to the text it sends (its typings leave it out). */
const prepareValue = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils
  .prepareValue;

/**
 * `sql` with its parameters written in as literals: `COPY (query)` takes no parameters. Each
 * `$n` becomes a quoted literal of the text pg would send for the value (an array as
 * PostgreSQL's array text, null as NULL), which PostgreSQL types as it would the parameter
 * (the extract's queries cast theirs: `$1::xid8`).
 */
export function inlineParameters(
  client: PoolClient,
  sql: string,
  params: readonly unknown[],
): string {
  return sql.replace(/\$(\d+)\b/g, (placeholder, n: string) => {
    const index = Number(n) - 1;
    if (index >= params.length) throw new Error(`${placeholder}: no such parameter`);
    const text = prepareValue(params[index]);
    if (text === null || text === undefined) return "NULL";
    if (typeof text !== "string") throw new Error(`${placeholder}: not a value COPY can take`);
    return client.escapeLiteral(text);
  });
}

/**
 * The text of `COPY (query) TO STDOUT` on `client` (in its transaction), in pieces of whole
 * lines (one a row: fields between tabs, escaped as `unescapeCopyText` undoes, `\N` for
 * null): PostgreSQL sends them as a stream, without waiting for the next batch's request as a
 * cursor does. Stopped early, the `COPY` is cancelled, and the client can go on.
 */
async function* copyText(client: PoolClient, query: CopyQuery): AsyncGenerator<string> {
  const stream = client.query(
    copyTo(`COPY (${inlineParameters(client, query.sql, query.params)}) TO STDOUT`),
  );
  // Settled once the statement is over, whichever way: the client is free again then.
  let over = false;
  const finished = new Promise<void>((resolve) => {
    const settle = () => {
      over = true;
      resolve();
    };
    stream.once("end", settle);
    stream.once("error", settle);
  });
  try {
    let rest: Buffer | undefined;
    // Not destroyed when the loop is left early: `stopCopy` ends the statement first.
    for await (const chunk of stream.iterator({
      destroyOnReturn: false,
    }) as AsyncIterable<Buffer>) {
      const bytes = rest ? Buffer.concat([rest, chunk]) : chunk;
      // Whole lines only: a line ends in "\n", which no UTF-8 sequence holds.
      const last = bytes.lastIndexOf(10);
      if (last < 0) {
        rest = bytes;
        continue;
      }
      rest = last + 1 < bytes.length ? bytes.subarray(last + 1) : undefined;
      yield bytes.toString("utf8", 0, last + 1);
    }
    if (rest) throw new Error("COPY: the stream ended within a row");
  } finally {
    if (!over) stopCopy(client, stream);
    await finished;
  }
}

/**
 * Calls `field(i, text)` for each field of each row of `text` (whole lines of `width`
 * fields), `text` null for a null, and `row()` after each row.
 */
function eachField(
  text: string,
  width: number,
  field: (i: number, text: string | null) => void,
  row: () => void,
): void {
  for (let start = 0; start < text.length;) {
    const end = text.indexOf("\n", start);
    let at = start;
    for (let i = 0; i < width; i++) {
      const tab = i === width - 1 ? end : text.indexOf("\t", at);
      if (tab < 0 || tab > end) throw new Error("COPY: a row with fewer columns than asked");
      const value = text.slice(at, tab);
      field(i, value === "\\N" ? null : unescapeCopyText(value));
      at = tab + 1;
    }
    row();
    start = end + 1;
  }
}

/**
 * The rows of `query` column by column, `batchSize` rows a batch, read with `COPY (query) TO
 * STDOUT` on `client` (in its transaction): no object a row, each field read straight into
 * its column (`readerFor`: the query writes each column in the form its kind reads). The
 * query's columns are `columns`, in order. Stopped early, the `COPY` is cancelled.
 */
export async function* copyColumns(
  client: PoolClient,
  query: CopyQuery,
  columns: readonly ColumnSpec[],
  batchSize: number,
): AsyncGenerator<ColumnBatch> {
  const readers = columns.map(readerFor);
  let builders = columns.map(columnBuilder);
  let rows = 0;
  const batches: ColumnBatch[] = [];
  for await (const text of copyText(client, query)) {
    eachField(
      text,
      columns.length,
      (i, value) => builders[i]!.add(value === null ? null : readers[i]!(value)),
      () => {
        if (++rows < batchSize) return;
        batches.push({ rows, columns: builders.map((builder) => builder.pack()) });
        builders = columns.map(columnBuilder);
        rows = 0;
      },
    );
    yield* batches.splice(0);
  }
  if (rows > 0) yield { rows, columns: builders.map((builder) => builder.pack()) };
}

/**
 * Cancels a `COPY` still sending, by PostgreSQL's cancel request (on a connection of its own,
 * as pg's `Client.cancel` sends it): the statement ends in an error, which the transaction's
 * owner rolls back. Rows still arriving meanwhile are dropped.
 */
function stopCopy(client: PoolClient, stream: NodeJS.ReadableStream): void {
  stream.on("data", () => {});
  stream.resume();
  const { host, port, processID, secretKey } = client as unknown as {
    host: string;
    port: number;
    processID: number;
    secretKey: number;
  };
  // pg's Connection, which its typings leave out: connect, send the cancel request, end.
  const connection = new pg.Connection() as unknown as NodeJS.EventEmitter & {
    connect(portOrPath: number | string, host?: string): void;
    cancel(processID: number, secretKey: number): void;
    end(): void;
  };
  connection.on("error", () => {}); // the statement ends anyway once all is read
  connection.on("connect", () => {
    connection.cancel(processID, secretKey);
    connection.end();
  });
  if (host.startsWith("/")) connection.connect(`${host}/.s.PGSQL.${port}`);
  else connection.connect(port, host);
}
