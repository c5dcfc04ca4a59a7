import { readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { AnnalError } from "../errors/index.ts";
import type { LogPosition } from "../store/index.ts";
import { isTableName, type TableName } from "./tables.ts";

/** The manifest's file name in an extract folder. */
export const MANIFEST_FILE = "annal-extract.json";

/** The manifest's format: a folder of another format is written again from the start. */
export const MANIFEST_FORMAT = 1;

/** What the folder holds of one table. */
export interface TableManifest {
  /** The log position the table's files cover: the next run writes what came after it. */
  readonly covered: LogPosition;
  /** Every file of the table, relative to the folder: exactly what `<table>/*.parquet` finds. */
  readonly files: readonly string[];
  /** Those of `files` holding rows still open, which the next run replaces. */
  readonly open: readonly string[];
  /** The rows in `files`, and in `open` of them. */
  readonly rows: number;
  readonly openRows: number;
}

/** One run, as the manifest remembers it. */
export interface RunRecord {
  readonly run: number;
  readonly at: string;
  /** Why the run wrote every file again (an erasure, a retention run), if it did. */
  readonly rewrite?: string;
  /** The files the run wrote and the rows in them, by table. */
  readonly tables: Readonly<Partial<Record<TableName, { files: string[]; rows: number }>>>;
}

/** `annal-extract.json`: what the folder covers, and how it came to. */
export interface Manifest {
  readonly format: number;
  /** A digest of the database's identity (never the identity): another database's is refused. */
  readonly database: string;
  readonly run: number;
  readonly tables: Readonly<Partial<Record<TableName, TableManifest>>>;
  readonly runs: readonly RunRecord[];
}

function invalid(dir: string, why: string): AnnalError {
  return new AnnalError("ANNAL_EXTRACT_FOLDER_INVALID", `${path.join(dir, MANIFEST_FILE)} ${why}`);
}

/** The folder's manifest, or undefined when it has none (a first run). */
export async function readManifest(dir: string): Promise<Manifest | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(dir, MANIFEST_FILE), "utf8");
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return undefined;
    throw error;
  }
  let manifest: Manifest;
  try {
    manifest = JSON.parse(text) as Manifest;
  } catch {
    throw invalid(dir, "is not JSON");
  }
  if (
    typeof manifest !== "object" ||
    manifest === null ||
    typeof manifest.database !== "string" ||
    typeof manifest.run !== "number" ||
    typeof manifest.tables !== "object" ||
    !Array.isArray(manifest.runs) ||
    !Object.keys(manifest.tables).every(isTableName)
  ) {
    throw invalid(dir, "is not an annal extract manifest");
  }
  return manifest;
}

/** Writes the manifest whole or not at all (a temporary file renamed over the old one). */
export async function writeManifest(dir: string, manifest: Manifest): Promise<void> {
  const target = path.join(dir, MANIFEST_FILE);
  await writeFile(`${target}.partial`, `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(`${target}.partial`, target);
}

export { invalid as invalidManifest };
