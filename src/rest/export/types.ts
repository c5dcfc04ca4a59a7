import type { z } from "zod";
import type { AttributeCatalog } from "../catalog.ts";
import type { FieldSelection } from "../fields.ts";
import type { SearchRow } from "../search/page.ts";

/** What every export writer knows of the rows it writes. */
export interface ExportShape {
  /** The configured type name (`user`). */
  readonly type: string;
  /** The attributes asked for: an explicit list, never `*` or `+`. */
  readonly selection: FieldSelection;
  readonly catalog: AttributeCatalog;
  /** A row as the search's node: `{ id, entryUUID, dn, type, ...attributes }`. */
  readonly node: (row: SearchRow) => Record<string, unknown>;
}

/** Turns rows into the text of the file: a head, the rows batch by batch, a tail. */
export interface RowWriter {
  readonly head: string;
  rows(rows: readonly SearchRow[]): string;
  readonly tail: string;
}

/** One export format, picked by the extension of `filename`. */
export interface ExportFormat<Options = unknown> {
  readonly name: string;
  /** Lower-case, with the dot: `.csv`. */
  readonly extensions: readonly string[];
  /** The `export` parameter's options: a strict object with defaults, each described. */
  readonly options: z.ZodType<Options>;
  contentType(options: Options): string;
  writer(shape: ExportShape, options: Options): RowWriter;
}

/** Declares a format with its options' type inferred from its schema. */
export function defineFormat<Schema extends z.ZodType>(
  format: Omit<ExportFormat<z.output<Schema>>, "options"> & { options: Schema },
): ExportFormat<z.output<Schema>> {
  return format as ExportFormat<z.output<Schema>>;
}

/** One served value as the text of a cell. */
export function cellText(value: unknown, separator: string, nulls: string): string {
  if (value === null || value === undefined) return nulls;
  if (Array.isArray(value)) return value.length === 0 ? nulls : value.map(String).join(separator);
  return String(value);
}

/** The characters a spreadsheet starts a formula with (CSV injection, as OWASP lists them). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A `;` before a formula's first character, anywhere in a cell. */
const FORMULA_AFTER_SEMICOLON = /;(?=[=+\-@\t\r])/g;

/**
 * Spreadsheets run a cell that starts with `=`, `+`, `-`, `@`, tab or CR as a formula (CSV
 * injection). Such a cell gets a leading `'`, which they show as text. A spreadsheet that
 * splits lines on `;` (the list separator of many locales) starts a cell after every `;`,
 * quoted or not, so unless `;` is the file's own `delimiter` (its cells holding one are quoted)
 * a `;` followed by one of those characters gets a `'` after it too: `a;=1+1` is written
 * `a;'=1+1`.
 *
 * @example
 * defuseFormula(";=HYPERLINK(…)", ",") // ";'=HYPERLINK(…)"
 */
export function defuseFormula(text: string, delimiter: string): string {
  const split = delimiter === ";" ? text : text.replace(FORMULA_AFTER_SEMICOLON, ";'");
  return FORMULA_START.test(split) ? `'${split}` : split;
}

/** The CSV and TSV columns: identifiers, then the attributes in the order asked. */
export function tableColumns(shape: ExportShape): string[] {
  return ["entryUUID", "dn", ...shape.selection.names.map((info) => info.name)];
}
