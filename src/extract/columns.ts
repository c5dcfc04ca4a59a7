import type { ColumnSpec } from "./parquet.ts";

/**
 * A batch of an extract's rows, column by column, in the form that crosses to the encoding
 * thread: numbers, times and UUIDs in typed arrays (transferred, not copied), strings and
 * small values in plain arrays, lists as offsets into their values. Rows were read as
 * objects, then cloned to the thread object by object: the cloning and the garbage were half
 * of the extract's own CPU.
 */
export type Packed =
  /** Booleans, 32-bit integers; null for none. */
  | { readonly t: "values"; readonly values: unknown[] }
  /**
   * Strings (JSON as its text) as UTF-8, each ended by a NUL (the last by the end of `bytes`):
   * row i's from `offsets[i]` to `offsets[i + 1] - 1`; `nulls` as for int64.
   */
  | {
      readonly t: "text";
      readonly bytes: Uint8Array;
      readonly offsets: Int32Array;
      readonly nulls: Uint8Array | null;
    }
  /** 64-bit integers; `nulls[i]` 1 where row i has none (no array: none is null). */
  | { readonly t: "int64"; readonly values: BigInt64Array; readonly nulls: Uint8Array | null }
  /** Milliseconds since the epoch; NaN for none. */
  | { readonly t: "millis"; readonly values: Float64Array }
  /** 16 bytes a row; `nulls` as for int64. */
  | { readonly t: "uuid"; readonly bytes: Uint8Array; readonly nulls: Uint8Array | null }
  /** Row i's list is `leaf`'s values `offsets[i]` to `offsets[i + 1]`; null where `nulls[i]`. */
  | {
      readonly t: "list";
      readonly offsets: Int32Array;
      readonly nulls: Uint8Array | null;
      readonly leaf: Packed;
    };

/** One batch: `rows` rows, a packed column for each of the file's columns, in order. */
export interface ColumnBatch {
  readonly rows: number;
  readonly columns: readonly Packed[];
}

/** Gathers one column's values, already in their JavaScript form, into a `Packed`. */
export interface ColumnBuilder {
  /** The next row's value: a string, bigint, number (milliseconds for a time), boolean, or null. */
  add(value: unknown): void;
  pack(): Packed;
}

/** A typed array of `length`, or twice `array`'s room holding its values. */
function grown<T extends Float64Array | BigInt64Array | Uint8Array | Int32Array>(
  array: T,
  needed: number,
): T {
  if (needed <= array.length) return array;
  const bigger = new (array.constructor as new (length: number) => T)(
    Math.max(needed, array.length * 2),
  );
  (bigger as { set(values: T): void }).set(array);
  return bigger;
}

class ValuesBuilder implements ColumnBuilder {
  values: unknown[] = [];
  add(value: unknown): void {
    this.values.push(value ?? null);
  }
  pack(): Packed {
    return { t: "values", values: this.values };
  }
}

const encoder = new TextEncoder();

/** Characters of text joined at once at most: far below V8's longest string. */
const JOIN_LIMIT = 1 << 26;

/**
 * `values` joined by NUL, as UTF-8: encoded a piece of at most `JOIN_LIMIT` characters at a
 * time (a single value may be longer), the pieces then put together, NUL between them.
 */
function joinedUtf8(values: readonly string[], limit: number): Uint8Array {
  const pieces: Uint8Array[] = [];
  for (let start = 0, length = 0, i = 0; i < values.length; i++) {
    length += values[i]!.length + 1;
    if (length > limit || i === values.length - 1) {
      pieces.push(encoder.encode(values.slice(start, i + 1).join("\0")));
      start = i + 1;
      length = 0;
    }
  }
  if (pieces.length <= 1) return pieces[0] ?? new Uint8Array(0);
  const bytes = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.length + 1, -1));
  for (let at = 0, p = 0; p < pieces.length; p++) {
    bytes.set(pieces[p]!, at);
    at += pieces[p]!.length + 1; // a NUL (0) between pieces
  }
  return bytes;
}

/**
 * Strings, encoded as UTF-8 all at once: joined by NUL, which no text in PostgreSQL holds (a
 * JSON text writes it escaped), encoded, and cut at the NULs. hyparquet-writer encoded each
 * string on its own (TextEncoder), and the strings were cloned to the thread one by one:
 * both a large part of the extract's CPU.
 */
class TextBuilder implements ColumnBuilder {
  values: string[] = [];
  nulls: Uint8Array | null = null;
  add(value: unknown): void {
    const i = this.values.length;
    if (value === null || value === undefined) {
      this.nulls = grown(this.nulls ?? new Uint8Array(1024), i + 1);
      this.nulls[i] = 1;
      this.values.push("");
    } else {
      this.values.push(value as string);
    }
  }
  pack(): Packed {
    return packText(this.values, this.nulls, JOIN_LIMIT);
  }
}

/**
 * Strings (`nulls[i]` 1 where row i has none) as a text column: joined by NUL and encoded a
 * piece of at most `limit` characters at a time, then cut at the NULs.
 */
export function packText(
  values: readonly string[],
  nulls: Uint8Array | null,
  limit: number,
): Extract<Packed, { t: "text" }> {
  const n = values.length;
  const bytes = joinedUtf8(values, limit);
  const offsets = new Int32Array(n + 1);
  let i = 1;
  for (let at = 0; at < bytes.length; at++) {
    if (bytes[at] === 0) offsets[i++] = at + 1;
  }
  if (i !== n && n > 0) throw new Error("a NUL in an extract's text");
  if (n > 0) offsets[n] = bytes.length + 1;
  return { t: "text", bytes, offsets, nulls: nulls && nulls.subarray(0, n) };
}

class Int64Builder implements ColumnBuilder {
  values = new BigInt64Array(1024);
  nulls: Uint8Array | null = null;
  n = 0;
  add(value: unknown): void {
    const i = this.n++;
    this.values = grown(this.values, this.n);
    if (value === null || value === undefined) {
      this.nulls = grown(this.nulls ?? new Uint8Array(this.values.length), this.n);
      this.nulls[i] = 1;
    } else {
      this.values[i] = value as bigint;
    }
  }
  pack(): Packed {
    return {
      t: "int64",
      values: this.values.subarray(0, this.n),
      nulls: this.nulls && this.nulls.subarray(0, this.n),
    };
  }
}

class MillisBuilder implements ColumnBuilder {
  values = new Float64Array(1024);
  n = 0;
  add(value: unknown): void {
    const i = this.n++;
    this.values = grown(this.values, this.n);
    this.values[i] =
      value === null || value === undefined
        ? Number.NaN
        : value instanceof Date
          ? value.getTime()
          : (value as number);
  }
  pack(): Packed {
    return { t: "millis", values: this.values.subarray(0, this.n) };
  }
}

class UuidBuilder implements ColumnBuilder {
  bytes = new Uint8Array(16 * 1024);
  buffer = Buffer.from(this.bytes.buffer);
  nulls: Uint8Array | null = null;
  n = 0;
  add(value: unknown): void {
    const i = this.n++;
    if (this.bytes.length < this.n * 16) {
      this.bytes = grown(this.bytes, this.n * 16);
      this.buffer = Buffer.from(this.bytes.buffer);
    }
    if (value === null || value === undefined) {
      this.nulls = grown(this.nulls ?? new Uint8Array(this.bytes.length / 16), this.n);
      this.nulls[i] = 1;
      return;
    }
    // Buffer's hex decoding: hyparquet-writer checks and converts text itself, character by
    // character, which was a tenth of an extract's time.
    const hex = (value as string).replaceAll("-", "");
    if (hex.length !== 32 || this.buffer.write(hex, i * 16, 16, "hex") !== 16) {
      throw new Error(`not a UUID: ${String(value)}`);
    }
  }
  pack(): Packed {
    return {
      t: "uuid",
      bytes: this.bytes.subarray(0, this.n * 16),
      nulls: this.nulls && this.nulls.subarray(0, this.n),
    };
  }
}

class ListBuilder implements ColumnBuilder {
  offsets = new Int32Array(1025);
  nulls: Uint8Array | null = null;
  n = 0;
  readonly leaf: ColumnBuilder;
  count = 0;
  constructor(leaf: ColumnBuilder) {
    this.leaf = leaf;
  }
  add(value: unknown): void {
    const i = this.n++;
    this.offsets = grown(this.offsets, this.n + 1);
    if (value === null || value === undefined) {
      this.nulls = grown(this.nulls ?? new Uint8Array(this.offsets.length), this.n);
      this.nulls[i] = 1;
    } else {
      for (const element of value as readonly unknown[]) this.leaf.add(element);
      this.count += (value as readonly unknown[]).length;
    }
    this.offsets[i + 1] = this.count;
  }
  pack(): Packed {
    return {
      t: "list",
      offsets: this.offsets.subarray(0, this.n + 1),
      nulls: this.nulls && this.nulls.subarray(0, this.n),
      leaf: this.leaf.pack(),
    };
  }
}

function scalarBuilder(kind: ColumnSpec["kind"]): ColumnBuilder {
  switch (kind) {
    case "int64":
      return new Int64Builder();
    case "timestamp":
      return new MillisBuilder();
    case "uuid":
      return new UuidBuilder();
    case "string":
    case "json":
      return new TextBuilder();
    default:
      return new ValuesBuilder();
  }
}

/** A builder for a column of `spec`'s kind (a list of it when `spec.list`). */
export function columnBuilder(spec: ColumnSpec): ColumnBuilder {
  return spec.list ? new ListBuilder(scalarBuilder(spec.kind)) : scalarBuilder(spec.kind);
}

/** The typed arrays' buffers of `batch`, to transfer. */
export function transferables(batch: ColumnBatch): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  const visit = (packed: Packed) => {
    switch (packed.t) {
      case "values":
        return;
      case "int64":
      case "millis":
        buffers.add(packed.values.buffer as ArrayBuffer);
        break;
      case "uuid":
        buffers.add(packed.bytes.buffer as ArrayBuffer);
        break;
      case "text":
        buffers.add(packed.bytes.buffer as ArrayBuffer);
        buffers.add(packed.offsets.buffer as ArrayBuffer);
        break;
      case "list":
        buffers.add(packed.offsets.buffer as ArrayBuffer);
        visit(packed.leaf);
        break;
    }
    if ("nulls" in packed && packed.nulls) buffers.add(packed.nulls.buffer as ArrayBuffer);
  };
  for (const column of batch.columns) visit(column);
  return [...buffers];
}

/**
 * A packed column's values as hyparquet-writer takes them: one a row, null for none, a list
 * an array (a typed array of 64-bit integers where no row is null, which it reads as such).
 */
export function unpack(packed: Packed): ArrayLike<unknown> {
  switch (packed.t) {
    case "values":
      return packed.values;
    case "text": {
      // A view of each string's bytes: hyparquet-writer takes bytes as they are.
      const { bytes, offsets, nulls } = packed;
      const rows = new Array<Uint8Array | null>(offsets.length - 1);
      for (let i = 0; i < rows.length; i++) {
        rows[i] = nulls?.[i] ? null : bytes.subarray(offsets[i], offsets[i + 1]! - 1);
      }
      return rows;
    }
    case "int64": {
      const { values, nulls } = packed;
      return nulls ? Array.from(values, (value, i) => (nulls[i] ? null : value)) : values;
    }
    case "millis":
      return Array.from(packed.values, (value) => (Number.isNaN(value) ? null : value));
    case "uuid": {
      const { bytes, nulls } = packed;
      const rows = new Array<Uint8Array | null>(bytes.length / 16);
      for (let i = 0; i < rows.length; i++) {
        rows[i] = nulls?.[i] ? null : bytes.subarray(i * 16, i * 16 + 16);
      }
      return rows;
    }
    case "list": {
      const { offsets, nulls } = packed;
      const leaf = unpack(packed.leaf);
      const rows = new Array<unknown[] | null>(offsets.length - 1);
      for (let i = 0; i < rows.length; i++) {
        rows[i] = nulls?.[i] ? null : Array.prototype.slice.call(leaf, offsets[i], offsets[i + 1]);
      }
      return rows;
    }
  }
}

/**
 * How a column's text in the extract's query's answer becomes its value (the text as
 * PostgreSQL writes it, COPY's escapes undone; a column with none is null and not read): the
 * tables' queries write each column in the form its kind reads (tables.ts): a time as its
 * milliseconds since the epoch, a list as a JSON array.
 */
export function readerFor(spec: ColumnSpec): (text: string) => unknown {
  if (spec.read) return spec.read;
  if (spec.list) return JSON.parse as (text: string) => unknown;
  switch (spec.kind) {
    case "int64":
      return BigInt;
    case "int32":
    case "timestamp":
      return Number;
    case "boolean":
      return (text) => text === "t";
    default:
      return (text) => text;
  }
}

/** Rows `start` to `end` of a packed column, copied (so that each part can be transferred). */
function slicePacked(packed: Packed, start: number, end: number): Packed {
  switch (packed.t) {
    case "values":
      return { t: "values", values: packed.values.slice(start, end) };
    case "text": {
      const first = packed.offsets[start]!;
      return {
        t: "text",
        bytes: packed.bytes.slice(first, packed.offsets[end]! - 1),
        offsets: packed.offsets.slice(start, end + 1).map((offset) => offset - first),
        nulls: packed.nulls && packed.nulls.slice(start, end),
      };
    }
    case "int64":
      return {
        t: "int64",
        values: packed.values.slice(start, end),
        nulls: packed.nulls && packed.nulls.slice(start, end),
      };
    case "millis":
      return { t: "millis", values: packed.values.slice(start, end) };
    case "uuid":
      return {
        t: "uuid",
        bytes: packed.bytes.slice(start * 16, end * 16),
        nulls: packed.nulls && packed.nulls.slice(start, end),
      };
    case "list": {
      const first = packed.offsets[start]!;
      return {
        t: "list",
        offsets: packed.offsets.slice(start, end + 1).map((offset) => offset - first),
        nulls: packed.nulls && packed.nulls.slice(start, end),
        leaf: slicePacked(packed.leaf, first, packed.offsets[end]!),
      };
    }
  }
}

/** Rows `start` to `end` (not included) of `batch`, copied. */
export function sliceBatch(batch: ColumnBatch, start: number, end: number): ColumnBatch {
  return {
    rows: end - start,
    columns: batch.columns.map((column) => slicePacked(column, start, end)),
  };
}

const decoder = new TextDecoder();

/**
 * A text column's strings (null for none), decoded at once and cut at the NULs (a piece of at
 * most `limit` bytes at a time, as `joinedUtf8` joined them).
 */
export function strings(
  packed: Extract<Packed, { t: "text" }>,
  limit = JOIN_LIMIT,
): (string | null)[] {
  const { bytes, offsets } = packed;
  const n = offsets.length - 1;
  let values: (string | null)[] = [];
  for (let start = 0; start < n;) {
    let end = start + 1;
    while (end < n && offsets[end + 1]! - 1 - offsets[start]! <= limit) end++;
    const piece = decoder.decode(bytes.subarray(offsets[start], offsets[end]! - 1)).split("\0");
    if (piece.length !== end - start) throw new Error("a NUL in an extract's text");
    if (start === 0 && end === n) values = piece;
    else for (const value of piece) values.push(value);
    start = end;
  }
  if (packed.nulls) {
    for (let i = 0; i < n; i++) if (packed.nulls[i]) values[i] = null;
  }
  return values;
}

/** A text column as hyparquet-writer takes it, and the encoding to write it with. */
function textColumn(packed: Extract<Packed, { t: "text" }>): {
  data: ArrayLike<unknown>;
  encoding: "RLE_DICTIONARY" | "PLAIN" | undefined;
} {
  const values = strings(packed);
  const distinct = new Set(values);
  distinct.delete(null);
  const present = packed.nulls ? values.filter((value) => value !== null).length : values.length;
  // Values repeated (at most half of them distinct): a dictionary of the strings, encoded
  // once each; else each value's bytes as they are, written plain. hyparquet-writer decides
  // by a sample otherwise, and encodes every string of a plain column on its own.
  if (distinct.size > 0 && distinct.size * 2 <= present) {
    return { data: values, encoding: "RLE_DICTIONARY" };
  }
  return { data: unpack(packed), encoding: distinct.size > 0 ? "PLAIN" : undefined };
}

/**
 * A packed column as hyparquet-writer takes it (`unpack`), with the encoding chosen for a
 * column of strings (`textColumn`); hyparquet-writer chooses for the others.
 */
export function writerColumn(packed: Packed): {
  data: ArrayLike<unknown>;
  encoding: "RLE_DICTIONARY" | "PLAIN" | undefined;
} {
  if (packed.t === "text") return textColumn(packed);
  if (packed.t === "list" && packed.leaf.t === "text") {
    const { offsets, nulls } = packed;
    const leaf = textColumn(packed.leaf);
    const rows = new Array<unknown[] | null>(offsets.length - 1);
    for (let i = 0; i < rows.length; i++) {
      rows[i] = nulls?.[i]
        ? null
        : Array.prototype.slice.call(leaf.data, offsets[i], offsets[i + 1]);
    }
    return { data: rows, encoding: leaf.encoding };
  }
  return { data: unpack(packed), encoding: undefined };
}
