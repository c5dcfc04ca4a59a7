/**
 * `npm run docs:errors` writes docs/errors.md from the catalog; with `--check` (part of
 * `npm run check`) it only compares, and fails when the file is not current.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ErrorCode } from "./codes/index.ts";
import { errorReference } from "./reference.ts";

const file = path.resolve(import.meta.dirname, "../../docs/errors.md");
const wanted = errorReference();
if (process.argv.includes("--check")) {
  let current = "";
  try {
    current = readFileSync(file, "utf8");
  } catch {
    // missing: not current
  }
  if (current !== wanted) {
    const code: ErrorCode = "ANNAL_DOCS_STALE";
    process.stderr.write(`annal: ${code}: docs/errors.md is not current\n`);
    process.stderr.write("annal: hint: run npm run docs:errors\n");
    process.exit(1);
  }
} else {
  writeFileSync(file, wanted);
}
