import { ByteWriter, ParquetWriter, type SchemaElement } from "hyparquet-writer";
import { writerColumn, type ColumnBatch } from "./columns.ts";

/**
 * What a column holds, as the extract's tables declare it: a scalar of one Parquet type, or a
 * list of them (a multi-valued attribute).
 */
export type ColumnKind = "string" | "json" | "uuid" | "int64" | "int32" | "boolean" | "timestamp";

export interface ColumnSpec {
  readonly name: string;
  readonly kind: ColumnKind;
  /** A list of `kind` (Parquet's three-level LIST), null when the row has none. */
  readonly list?: boolean;
  /** Never null (REQUIRED); default nullable. */
  readonly required?: boolean;
  /**
   * How the column's text in the query's answer becomes its value, when not as its kind's
   * (`readerFor`): an attribute's column converts the attribute's values.
   */
  readonly read?: (text: string) => unknown;
}

/** The leaf schema element of a kind, named `name`. */
function leaf(name: string, kind: ColumnKind, repetition: "REQUIRED" | "OPTIONAL"): SchemaElement {
  const base = { name, repetition_type: repetition } as const;
  switch (kind) {
    case "string":
      return { ...base, type: "BYTE_ARRAY", converted_type: "UTF8" };
    case "json":
      return { ...base, type: "BYTE_ARRAY", converted_type: "JSON" };
    case "uuid":
      return {
        ...base,
        type: "FIXED_LEN_BYTE_ARRAY",
        type_length: 16,
        logical_type: { type: "UUID" },
      };
    case "int64":
      return { ...base, type: "INT64" };
    case "int32":
      return { ...base, type: "INT32" };
    case "boolean":
      return { ...base, type: "BOOLEAN" };
    case "timestamp":
      // A moment (UTC), not a wall-clock time: DuckDB reads it as TIMESTAMP WITH TIME ZONE,
      // Spark as TimestampType. Milliseconds: what the projections hand to JavaScript.
      return {
        ...base,
        type: "INT64",
        logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MILLIS" },
      };
  }
}

/** The Parquet schema of `columns`, lists as the three-level LIST every reader knows. */
export function parquetSchema(columns: readonly ColumnSpec[]): SchemaElement[] {
  const schema: SchemaElement[] = [{ name: "root", num_children: columns.length }];
  for (const column of columns) {
    const repetition = column.required ? "REQUIRED" : "OPTIONAL";
    if (column.list) {
      schema.push(
        { name: column.name, repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        leaf("element", column.kind, "REQUIRED"),
      );
    } else {
      schema.push(leaf(column.name, column.kind, repetition));
    }
  }
  return schema;
}

/** Where a file's bytes go: a file on disk, or an HTTP response. Resolves when taken. */
export type ByteSink = (bytes: Uint8Array) => Promise<void>;

/**
 * hyparquet-writer's byte buffer, emptied into `sink` after every row group (the writer calls
 * `flush` between groups and waits for it), so a file of any size holds at most one row group
 * in memory, and a slow sink slows the writing.
 */
class SinkWriter extends ByteWriter {
  readonly #sink: ByteSink;

  constructor(sink: ByteSink) {
    super(1 << 20);
    this.#sink = sink;
  }

  flush(): Promise<void> {
    // A copy: the buffer is written over from the start once the index is reset.
    const bytes = new Uint8Array(this.buffer, 0, this.index).slice();
    this.index = 0;
    return bytes.length > 0 ? this.#sink(bytes) : Promise.resolve();
  }

  override finish(): Promise<void> {
    return this.flush();
  }
}

/**
 * One Parquet file written row group by row group: `writeColumns` takes a batch of rows
 * column by column (`ColumnBatch`) and writes it as one row group (compressed with Snappy,
 * with statistics), `finish` writes the footer.
 *
 * A JSON column's values are its JSON text (as PostgreSQL writes it): hyparquet-writer would
 * take objects and write each with `JSON.stringify` again, so its column is written as a
 * string column (the same bytes, the same statistics) and declared JSON in the footer, which
 * is where a reader learns a column's type.
 *
 * @example
 * const file = new ParquetRowGroups(columns, (bytes) => stream.write(bytes), metadata);
 * await file.writeColumns(batch); await file.finish();
 */
export class ParquetRowGroups {
  readonly #columns: readonly ColumnSpec[];
  readonly #writer: ParquetWriter;
  /** The schema's JSON leaves, written as strings until the footer. */
  readonly #json: SchemaElement[];
  #rows = 0;

  constructor(
    columns: readonly ColumnSpec[],
    sink: ByteSink,
    metadata: Readonly<Record<string, string>> = {},
  ) {
    this.#columns = columns;
    const schema = parquetSchema(columns);
    this.#json = schema.filter((element) => element.converted_type === "JSON");
    for (const element of this.#json) element.converted_type = "UTF8";
    this.#writer = new ParquetWriter({
      writer: new SinkWriter(sink),
      schema,
      codec: "SNAPPY",
      statistics: true,
      createdBy: "annal",
      kvMetadata: Object.entries(metadata).map(([key, value]) => ({ key, value })),
    });
  }

  /** Rows written so far. */
  get rows(): number {
    return this.#rows;
  }

  /** One row group of the batch's rows. */
  async writeColumns(batch: ColumnBatch): Promise<void> {
    if (batch.rows === 0) return;
    if (batch.columns.length !== this.#columns.length) {
      throw new Error(`${batch.columns.length} columns for ${this.#columns.length}`);
    }
    this.#rows += batch.rows;
    await this.#writer.write({
      columnData: this.#columns.map((column, i) => {
        const { data, encoding } = writerColumn(batch.columns[i]!);
        return { name: column.name, data: data as unknown[], ...(encoding ? { encoding } : {}) };
      }),
      rowGroupSize: batch.rows,
    });
  }

  async finish(): Promise<void> {
    for (const element of this.#json) element.converted_type = "JSON";
    await this.#writer.finish();
  }
}
