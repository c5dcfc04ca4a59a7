import { ByteWriter, ParquetWriter, type SchemaElement } from "hyparquet-writer";

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

/**
 * The 16 bytes of each UUID of `values` (text, or null), by Buffer's hex decoding into one
 * buffer: hyparquet-writer checks and converts text itself, character by character, which
 * was a tenth of an extract's time.
 */
function uuidBytes(values: readonly unknown[]): unknown[] {
  const bytes = new Uint8Array(values.length * 16);
  const buffer = Buffer.from(bytes.buffer);
  return values.map((value, i) => {
    if (typeof value !== "string") return value ?? null;
    const hex = value.replaceAll("-", "");
    if (hex.length !== 32 || buffer.write(hex, i * 16, 16, "hex") !== 16) {
      throw new Error(`not a UUID: ${value}`);
    }
    return bytes.subarray(i * 16, i * 16 + 16);
  });
}

/** A column's values for one row group, as hyparquet-writer takes them. */
export interface ColumnData {
  readonly name: string;
  readonly data: unknown[];
}

/** The values of each of `columns` in `rows` (objects keyed by column name). */
export function columnData(
  columns: readonly ColumnSpec[],
  rows: readonly Readonly<Record<string, unknown>>[],
): ColumnData[] {
  return columns.map((column) => {
    const values = rows.map((row) => row[column.name] ?? null);
    return {
      name: column.name,
      data: column.kind === "uuid" && !column.list ? uuidBytes(values) : values,
    };
  });
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
 * One Parquet file written row group by row group: `write` takes a batch of rows (objects
 * keyed by column name) and writes them as one row group (compressed with Snappy, with
 * statistics), `finish` writes the footer.
 *
 * @example
 * const file = new ParquetRowGroups(columns, (bytes) => stream.write(bytes), "annal extract");
 * await file.write(rows); await file.finish();
 */
export class ParquetRowGroups {
  readonly #columns: readonly ColumnSpec[];
  readonly #writer: ParquetWriter;
  #rows = 0;

  constructor(
    columns: readonly ColumnSpec[],
    sink: ByteSink,
    metadata: Readonly<Record<string, string>> = {},
  ) {
    this.#columns = columns;
    this.#writer = new ParquetWriter({
      writer: new SinkWriter(sink),
      schema: parquetSchema(columns),
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

  async write(rows: readonly Readonly<Record<string, unknown>>[]): Promise<void> {
    await this.writeColumns(columnData(this.#columns, rows), rows.length);
  }

  /** One row group of `rows` rows from its columns' values (`columnData`'s). */
  async writeColumns(columns: readonly ColumnData[], rows: number): Promise<void> {
    if (rows === 0) return;
    this.#rows += rows;
    await this.#writer.write({ columnData: [...columns], rowGroupSize: rows });
  }

  async finish(): Promise<void> {
    await this.#writer.finish();
  }
}
