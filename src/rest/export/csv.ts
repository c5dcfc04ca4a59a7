import { stringify } from "csv-stringify/sync";
import { z } from "zod";
import { cellText, defineFormat, defuseFormula, tableColumns, type ExportShape } from "./types.ts";
import type { SearchRow } from "../search/page.ts";

const common = {
  header: z.boolean().default(true).describe("Write a first row with the column names."),
  nulls: z
    .string()
    .max(32)
    .default("")
    .describe("The text of a cell whose attribute the entry does not have."),
  separator: z
    .string()
    .min(1)
    .max(8)
    .default("|")
    .describe("Joins the values of a multi-valued attribute within one cell."),
  escapeFormulas: z
    .boolean()
    .default(true)
    .describe(
      "Prefix cells starting with = + - @ tab or CR with ', and put ' after a ; followed by one of them (unless ; is the delimiter), so that spreadsheets show them as text instead of running them as formulas.",
    ),
  bom: z
    .boolean()
    .default(false)
    .describe("Start the file with a UTF-8 byte order mark (helps old Excel read UTF-8)."),
};

function cells(
  shape: ExportShape,
  row: SearchRow,
  options: CommonOptions,
  delimiter: string,
): string[] {
  const node = shape.node(row);
  return tableColumns(shape).map((column) => {
    const text = cellText(node[column], options.separator, options.nulls);
    return options.escapeFormulas ? defuseFormula(text, delimiter) : text;
  });
}

type CommonOptions = {
  header: boolean;
  nulls: string;
  separator: string;
  escapeFormulas: boolean;
  bom: boolean;
};

/** RFC 4180 CSV: quoted where needed (and always around line breaks), CRLF between records. */
export const csvFormat = defineFormat({
  name: "csv",
  extensions: [".csv"],
  options: z.strictObject({
    delimiter: z
      .string()
      .length(1)
      // A pattern, not a refinement: the OpenAPI document states it. No control character
      // (C0, DEL, C1): a tab-separated file is the tsv format.
      .regex(
        /^[^"\u0000-\u001f\u007f-\u009f]$/,
        "must not be a quote or a control character (for tabs, name the file .tsv)",
      )
      .default(",")
      .describe(
        "The field delimiter: one character, not a quote or a control character, e.g. ; for spreadsheets in many locales.",
      ),
    lineEnding: z
      .enum(["crlf", "lf"])
      .default("crlf")
      .describe("Between records: CRLF as RFC 4180 says, or LF."),
    ...common,
  }),
  contentType: (options) =>
    `text/csv; charset=utf-8; header=${options.header ? "present" : "absent"}`,
  writer(shape, options) {
    const write = (records: string[][]) =>
      stringify(records, {
        delimiter: options.delimiter,
        record_delimiter: options.lineEnding === "crlf" ? "windows" : "unix",
        quoted_match: /[\r\n]/,
      });
    return {
      head: (options.bom ? "\ufeff" : "") + (options.header ? write([tableColumns(shape)]) : ""),
      rows: (rows) => write(rows.map((row) => cells(shape, row, options, options.delimiter))),
      tail: "",
    };
  },
});

const TSV_ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\\\",
  "\t": "\\t",
  "\n": "\\n",
  "\r": "\\r",
};

/**
 * Tab-separated values (IANA text/tab-separated-values): fields cannot hold tabs or line
 * breaks, so a backslash, tab, LF and CR in a value are written `\\`, `\t`, `\n`, `\r`.
 */
export const tsvFormat = defineFormat({
  name: "tsv",
  extensions: [".tsv"],
  options: z.strictObject(common),
  contentType: () => "text/tab-separated-values; charset=utf-8",
  writer(shape, options) {
    const line = (fields: string[]) =>
      `${fields.map((field) => field.replace(/[\\\t\n\r]/g, (c) => TSV_ESCAPES[c]!)).join("\t")}\n`;
    return {
      head: (options.bom ? "\ufeff" : "") + (options.header ? line(tableColumns(shape)) : ""),
      rows: (rows) => rows.map((row) => line(cells(shape, row, options, "\t"))).join(""),
      tail: "",
    };
  },
});
