import { AnnalError } from "../errors/index.ts";

/** Rows under a header, each column as wide as its widest cell; the last column runs free. */
export function columns(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ");
  return [line(header), ...rows.map(line)];
}

/** `--limit N`: a whole number from 1 to 1000, else `ANNAL_USAGE`. */
export function parseLimit(value: string): number {
  const limit = /^\d{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= 1000)) {
    throw new AnnalError("ANNAL_USAGE", `--limit ${value}: expected a whole number from 1 to 1000`);
  }
  return limit;
}
