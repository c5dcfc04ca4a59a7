import { z } from "zod";
import { RestError } from "../errors.ts";
import { csvFormat, tsvFormat } from "./csv.ts";
import { jsonFormat, jsonLdFormat, jsonSeqFormat, ndjsonFormat } from "./json.ts";
import { ldifFormat } from "./ldif.ts";
import type { ExportFormat } from "./types.ts";

/** The export formats, each picked by an extension of `filename`. */
export const EXPORT_FORMATS: readonly ExportFormat[] = [
  csvFormat,
  tsvFormat,
  jsonFormat,
  ndjsonFormat,
  jsonSeqFormat,
  jsonLdFormat,
  ldifFormat,
] as ExportFormat[];

/** The format `filename`'s extension names; 400 `ANNAL_EXPORT_FORMAT_UNKNOWN` otherwise. */
export function formatOf(filename: string): ExportFormat {
  const lower = filename.toLowerCase();
  // Longest extension first: ".json-seq" before ".json".
  const candidates = EXPORT_FORMATS.flatMap((format) =>
    format.extensions.map((extension) => ({ extension, format })),
  ).sort((a, b) => b.extension.length - a.extension.length);
  const found = candidates.find(({ extension }) => lower.endsWith(extension));
  if (found) return found.format;
  const known = candidates.map(({ extension }) => extension).sort();
  throw new RestError(
    "ANNAL_EXPORT_FORMAT_UNKNOWN",
    "filename: its extension names no export format",
    {
      hint: `end the file name in one of ${known.join(", ")}`,
      details: { parameter: "filename", expected: known },
    },
  );
}

/** The `export` parameter: a JSON object of the format's options, checked, defaults applied. */
export function exportOptions<Options>(
  format: ExportFormat<Options>,
  text: string | undefined,
): Options {
  let input: unknown = {};
  if (text !== undefined) {
    try {
      input = JSON.parse(text);
    } catch {
      throw optionsError(format, "is not valid JSON");
    }
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      throw optionsError(format, "must be a JSON object of options");
    }
  }
  const { sign, ...formatInput } = input as Record<string, unknown>;
  if (sign !== undefined && typeof sign !== "boolean") {
    throw optionsError(format, "sign: expected true or false");
  }
  const result = format.options.safeParse(formatInput);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) =>
    issue.code === "unrecognized_keys"
      ? `unknown option${issue.keys.length === 1 ? "" : "s"} ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}`
      : `${issue.path.join(".") || "options"}: ${issue.message}`,
  );
  throw optionsError(format, problems.join("; "));
}

/**
 * `export={"sign":true}`: whether the export is to be signed (every format takes `sign`; see
 * `beginSignedExport`). Call after `exportOptions`, which checks the text.
 */
export function exportSigned(text: string | undefined): boolean {
  return text !== undefined && (JSON.parse(text) as { sign?: boolean }).sign === true;
}

function optionsError(format: ExportFormat, why: string): RestError {
  const keys = Object.keys(
    (z.toJSONSchema(format.options, { io: "input" }) as { properties?: object }).properties ?? {},
  );
  return new RestError("ANNAL_EXPORT_OPTIONS_INVALID", `export: ${why}`, {
    hint: `the ${format.name} options are ${keys.join(", ")}; see /api.json`,
    details: { parameter: "export", format: format.name, options: keys },
  });
}
