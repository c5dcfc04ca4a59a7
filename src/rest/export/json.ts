import { z } from "zod";
import type { SearchRow } from "../search/page.ts";
import { defineFormat, type ExportShape } from "./types.ts";

const nulls = z
  .enum(["null", "omit"])
  .default("null")
  .describe(
    "An attribute asked for that the entry does not have: null, or left out of the object.",
  );

function record(shape: ExportShape, row: SearchRow, options: { nulls: "null" | "omit" }) {
  const node = shape.node(row);
  if (options.nulls === "omit") {
    for (const [key, value] of Object.entries(node)) if (value === null) delete node[key];
  }
  return node;
}

/** One JSON array, written element by element: `[`, the nodes separated by `,`, `]`. */
export const jsonFormat = defineFormat({
  name: "json",
  extensions: [".json"],
  options: z.strictObject({ nulls }),
  contentType: () => "application/json; charset=utf-8",
  writer(shape, options) {
    let first = true;
    return {
      head: "[",
      rows: (rows) =>
        rows
          .map((row) => {
            const text = `${first ? "\n" : ",\n"}${JSON.stringify(record(shape, row, options))}`;
            first = false;
            return text;
          })
          .join(""),
      get tail() {
        return first ? "]\n" : "\n]\n";
      },
    };
  },
});

/** Newline-delimited JSON: one node per line. */
export const ndjsonFormat = defineFormat({
  name: "ndjson",
  extensions: [".ndjson", ".jsonl"],
  options: z.strictObject({ nulls }),
  contentType: () => "application/x-ndjson; charset=utf-8",
  writer: (shape, options) => ({
    head: "",
    rows: (rows) => rows.map((row) => `${JSON.stringify(record(shape, row, options))}\n`).join(""),
    tail: "",
  }),
});

/** RFC 7464 JSON text sequences: each node after a record separator (U+001E), ending in LF. */
export const jsonSeqFormat = defineFormat({
  name: "json-seq",
  extensions: [".json-seq"],
  options: z.strictObject({ nulls }),
  contentType: () => "application/json-seq",
  writer: (shape, options) => ({
    head: "",
    rows: (rows) =>
      rows.map((row) => `\u001e${JSON.stringify(record(shape, row, options))}\n`).join(""),
    tail: "",
  }),
});

/**
 * JSON-LD: `{ "@context": ..., "@graph": [ ... ] }`, each entry a node with `@id`
 * (`urn:uuid:<entryUUID>`), `@type` (the entry type) and its attributes as properties in
 * the `vocab` namespace.
 */
export const jsonLdFormat = defineFormat({
  name: "json-ld",
  extensions: [".jsonld"],
  options: z.strictObject({
    nulls,
    vocab: z
      .string()
      .max(500)
      .regex(/^[A-Za-z][A-Za-z0-9+.-]*:\S*$/, "must be an absolute IRI")
      .default("urn:annal:attribute:")
      .describe("The @vocab: the IRI that attribute and type names are appended to."),
  }),
  contentType: () => "application/ld+json; charset=utf-8",
  writer(shape, options) {
    let first = true;
    const context = { "@vocab": options.vocab };
    return {
      head: `{"@context":${JSON.stringify(context)},"@graph":[`,
      rows: (rows) =>
        rows
          .map((row) => {
            const { id: _id, type, entryUUID, ...rest } = record(shape, row, options);
            const node = {
              "@id": `urn:uuid:${String(entryUUID)}`,
              "@type": type,
              entryUUID,
              ...rest,
            };
            const text = `${first ? "\n" : ",\n"}${JSON.stringify(node)}`;
            first = false;
            return text;
          })
          .join(""),
      get tail() {
        return first ? "]}\n" : "\n]}\n";
      },
    };
  },
});
