/**
 * `npm run docs:config`: writes the configuration reference, `docs/configuration.md`, from the
 * configuration's schemas. With `--check` (part of `npm run check`) it writes nothing and
 * fails when the file is not what it would write.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { configReference, REFERENCE_COMMAND, REFERENCE_FILE } from "../config/reference/index.ts";
import { AnnalError } from "../errors.ts";
import { failureLines, type Output, processOutput } from "./output.ts";
import { UsageError } from "./usage.ts";
import { SOURCE_ROOT } from "./version.ts";

export async function runDocsConfig(
  args: readonly string[],
  output: Output = processOutput,
  root: string = SOURCE_ROOT,
): Promise<number> {
  try {
    const check = checkOnly(args);
    const file = path.join(root, REFERENCE_FILE);
    const reference = configReference();
    if (!check) {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, reference);
      output.out(`wrote ${REFERENCE_FILE}`);
    } else if ((await readIfThere(file)) !== reference) {
      throw new AnnalError("ANNAL_DOCS_STALE", `${REFERENCE_FILE} is not current`, {
        hint: `run ${REFERENCE_COMMAND}`,
      });
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
    `write ${REFERENCE_COMMAND} to write ${REFERENCE_FILE}, or add -- --check to check it`,
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

if (import.meta.main) process.exit(await runDocsConfig(process.argv.slice(2)));
