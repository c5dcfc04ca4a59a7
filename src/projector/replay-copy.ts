import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { from as copyFrom } from "pg-copy-streams";
import type { PoolClient } from "../db/index.ts";
import { quoteIdentifier } from "./schema.ts";
import type { ReplayPlan, ReplayRows, ReplayTable } from "./types.ts";

/** One key's row held by a replay: what goes (`gone`: the stored row's key) and what comes. */
interface Held {
  /** The key of a stored row to delete before `values` is written (deleted in this window). */
  gone: readonly unknown[] | undefined;
  values: readonly unknown[] | undefined;
}

/**
 * The rows a replay holds between two writes (`ReplayRows`), and the writing of them: per
 * table, a map from the key's text to what the events folded since the last write leave.
 */
export class HeldRows implements ReplayRows {
  private readonly tables = new Map<string, { table: ReplayTable; keyAt: number[] }>();
  private readonly held = new Map<string, Map<string, Held>>();
  /** Tables written to already: a later write merges instead of copying straight in. */
  private readonly written = new Set<string>();
  private count = 0;

  constructor(plan: ReplayPlan<string>) {
    for (const table of plan.tables) {
      const keyAt = table.key.map((column) => table.columns.indexOf(column));
      if (keyAt.some((at) => at < 0)) {
        throw new Error(`replay table ${table.name}: its key is not among its columns`);
      }
      this.tables.set(table.name, { table, keyAt });
      this.held.set(table.name, new Map());
    }
  }

  /** How many rows (and deletes) are held. */
  get size(): number {
    return this.count;
  }

  get(table: string, key: readonly unknown[]): readonly unknown[] | undefined {
    return this.rowsOf(table).get(keyText(key))?.values;
  }

  put(table: string, values: readonly unknown[]): void {
    const { keyAt } = this.tables.get(table)!;
    const rows = this.rowsOf(table);
    const key = keyText(keyAt.map((at) => values[at]));
    const before = rows.get(key);
    if (!before) this.count++;
    rows.set(key, { gone: before?.gone, values });
  }

  delete(table: string, key: readonly unknown[]): void {
    const rows = this.rowsOf(table);
    const text = keyText(key);
    if (!rows.has(text)) this.count++;
    rows.set(text, { gone: key, values: undefined });
  }

  /**
   * Writes the rows held to the tables in `schema`, inside the client's transaction, and lets
   * go of them. A table nothing was written to yet gets its rows by COPY straight in (its
   * deletes have nothing to delete); another gets them by COPY into a temporary table, then
   * one `DELETE … USING` of the rows deleted and one `INSERT … ON CONFLICT … DO UPDATE`.
   */
  async write(client: PoolClient, schema: string): Promise<void> {
    for (const [name, { table }] of this.tables) {
      const rows = this.held.get(name)!;
      if (rows.size === 0) continue;
      const target = `${quoteIdentifier(schema)}.${quoteIdentifier(name)}`;
      const columns = table.columns.map(quoteIdentifier).join(", ");
      const values = [...rows.values()].flatMap((row) => (row.values ? [row.values] : []));
      if (!this.written.has(name)) {
        await copyRows(client, `COPY ${target} (${columns}) FROM STDIN`, values);
        this.written.add(name);
      } else {
        const staged = quoteIdentifier(`replay_rows_${name}`);
        const gone = quoteIdentifier(`replay_gone_${name}`);
        const key = table.key.map(quoteIdentifier);
        await client.query(
          `CREATE TEMPORARY TABLE ${staged} ON COMMIT DROP AS
             SELECT ${columns} FROM ${target} WITH NO DATA`,
        );
        const deleted = [...rows.values()].flatMap((row) => (row.gone ? [row.gone] : []));
        if (deleted.length > 0) {
          await client.query(
            `CREATE TEMPORARY TABLE ${gone} ON COMMIT DROP AS
               SELECT ${key.join(", ")} FROM ${target} WITH NO DATA`,
          );
          await copyRows(client, `COPY ${gone} FROM STDIN`, deleted);
          await client.query(
            `DELETE FROM ${target} AS t USING ${gone} AS g
              WHERE ${key.map((k) => `t.${k} = g.${k}`).join(" AND ")}`,
          );
        }
        await copyRows(client, `COPY ${staged} FROM STDIN`, values);
        const merge =
          table.merge ??
          table.columns
            .filter((column) => !table.key.includes(column))
            .map((column) => `${quoteIdentifier(column)} = EXCLUDED.${quoteIdentifier(column)}`)
            .join(", ");
        await client.query(
          `INSERT INTO ${target} AS t (${columns}) SELECT ${columns} FROM ${staged}
           ON CONFLICT (${key.join(", ")}) ${merge ? `DO UPDATE SET ${merge}` : "DO NOTHING"}`,
        );
      }
      rows.clear();
    }
    this.count = 0;
  }

  private rowsOf(table: string): Map<string, Held> {
    const rows = this.held.get(table);
    if (!rows) throw new Error(`the replay plan names no table ${table}`);
    return rows;
  }
}

/** A key's columns as one map key (a single text or uuid column stays as it is). */
function keyText(key: readonly unknown[]): string {
  return key.length === 1 ? String(key[0]) : JSON.stringify(key);
}

/** About how many characters the COPY stream is sent in at a time. */
const CHUNK = 256 * 1024;

/** `rows` sent with `sql` (a `COPY … FROM STDIN` in the text format). */
export async function copyRows(
  client: PoolClient,
  sql: string,
  rows: readonly (readonly unknown[])[],
): Promise<void> {
  if (rows.length === 0) return;
  await pipeline(Readable.from(copyText(rows)), client.query(copyFrom(sql)));
}

/** The rows in COPY's text format, in chunks of about `CHUNK` characters. */
function* copyText(rows: readonly (readonly unknown[])[]): Generator<string> {
  let lines: string[] = [];
  let length = 0;
  for (const row of rows) {
    const line = `${row.map(copyField).join("\t")}\n`;
    lines.push(line);
    length += line.length;
    if (length >= CHUNK) {
      yield lines.join("");
      lines = [];
      length = 0;
    }
  }
  if (lines.length > 0) yield lines.join("");
}

/**
 * One value as a field of COPY's text format: `\N` for null, a Date as ISO 8601, an object as
 * its JSON (for json and jsonb columns); backslash, tab, newline and carriage return escaped.
 */
export function copyField(value: unknown): string {
  if (value === null || value === undefined) return "\\N";
  let text: string;
  if (typeof value === "string") text = value;
  else if (value instanceof Date) return value.toISOString();
  else if (typeof value === "object") text = JSON.stringify(value);
  else return String(value);
  return ESCAPED.test(text) ? text.replace(ESCAPES, (c) => ESCAPE[c]!) : text;
}

const ESCAPED = /[\\\t\n\r]/;
const ESCAPES = /[\\\t\n\r]/g;
const ESCAPE: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };
