import pg from "pg";
import { to as copyTo } from "pg-copy-streams";
import type { PoolClient } from "../db/index.ts";

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
 * The rows of `query`, `batchSize` at a time, read with `COPY (query) TO STDOUT` on `client`
 * (in its transaction): PostgreSQL sends them as a stream, without waiting for the next
 * batch's request as a cursor does. Each value is parsed by pg's parser for its column's type,
 * from the same text a query's answer holds, so a row is the object `client.query` would give.
 * Stopped early, the `COPY` is cancelled, and the client can go on.
 */
export async function* copyRows(
  client: PoolClient,
  query: CopyQuery,
  batchSize: number,
): AsyncGenerator<Record<string, unknown>[]> {
  // The columns' names and types, from the query's description (no row is made).
  const described = await client.query({
    text: `SELECT * FROM (${query.sql}) AS q LIMIT 0`,
    values: [...query.params],
  });
  const names = described.fields.map((field) => field.name);
  const parsers = described.fields.map(
    (field) => pg.types.getTypeParser(field.dataTypeID, "text") as (text: string) => unknown,
  );
  const width = names.length;
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
    let batch: Record<string, unknown>[] = [];
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
      const text = bytes.toString("utf8", 0, last + 1);
      for (let start = 0; start < text.length;) {
        const end = text.indexOf("\n", start);
        const row: Record<string, unknown> = {};
        let at = start;
        for (let i = 0; i < width; i++) {
          const tab = i === width - 1 ? end : text.indexOf("\t", at);
          if (tab < 0 || tab > end) throw new Error("COPY: a row with fewer columns than asked");
          const field = text.slice(at, tab);
          row[names[i]!] = field === "\\N" ? null : parsers[i]!(unescapeCopyText(field));
          at = tab + 1;
        }
        batch.push(row);
        if (batch.length >= batchSize) {
          yield batch;
          batch = [];
        }
        start = end + 1;
      }
    }
    if (rest) throw new Error("COPY: the stream ended within a row");
    if (batch.length > 0) yield batch;
  } finally {
    if (!over) stopCopy(client, stream);
    await finished;
  }
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
