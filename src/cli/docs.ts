/**
 * `npm run docs`: writes the documents generated from the code, the configuration reference
 * (`docs/configuration.md`, from the configuration's schemas) and the error codes
 * (`docs/errors.md`, from the catalog). With `--check` (part of `npm run check`) it writes
 * nothing and fails when a file is not what it would write.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { configReference } from "../config/index.ts";
import { AnnalError } from "../errors/index.ts";
import { errorReference } from "../errors/index.ts";
import { failureLines, type Output, processOutput } from "./output.ts";
import { UsageError } from "./usage.ts";
import { SOURCE_ROOT } from "./version.ts";

/** The command that writes them, as the generated files and the hints name it. */
export const DOCS_COMMAND = "npm run docs";

/** Every generated document: its path in the repository and what writes it. */
export const GENERATED_DOCS: readonly { readonly file: string; write(): string }[] = [
  { file: "docs/configuration.md", write: configReference },
  { file: "docs/errors.md", write: errorReference },
];

export async function runDocs(
  args: readonly string[],
  output: Output = processOutput,
  root: string = SOURCE_ROOT,
): Promise<number> {
  try {
    const check = checkOnly(args);
    for (const doc of GENERATED_DOCS) {
      const file = path.join(root, doc.file);
      const text = doc.write();
      if (!check) {
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, text);
        output.out(`wrote ${doc.file}`);
      } else if ((await readIfThere(file)) !== text) {
        throw new AnnalError("ANNAL_DOCS_STALE", `${doc.file} is not current`, {
          hint: `run ${DOCS_COMMAND}`,
        });
      }
    }
    return 0;
  } catch (error) {
    for (const line of failureLines(error)) output.err(line);
    return 1;
  }
}

function checkOnly(args: readonly string[]): boolean {
  const [first, ...rest] = args;
  if (first === undefined) return false;
  if (first === "--check" && rest.length === 0) return true;
  throw new UsageError(
    `unexpected argument "${first === "--check" ? rest[0] : first}"`,
    `write ${DOCS_COMMAND} to write the generated documents, or add -- --check to check them`,
  );
}

async function readIfThere(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

if (import.meta.main) process.exit(await runDocs(process.argv.slice(2)));
