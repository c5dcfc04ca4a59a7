import { readFile } from "node:fs/promises";
import { verifyExport } from "../../audit/index.ts";
import { AnnalError } from "../../errors/index.ts";
import type { CommandModule } from "../command.ts";
import type { Output } from "../output.ts";
import { VERIFY_EXPORT } from "../registry.ts";
import { parseCommandLine, UsageError } from "../usage.ts";

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    throw new AnnalError(
      "ANNAL_FILE_UNREADABLE",
      `cannot read ${what} ${file}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
}

/** The JWK set at `source`: a URL (http or https) or a file. */
async function readKeys(source: string): Promise<{ keys?: Record<string, unknown>[] }> {
  let text: string;
  if (/^https?:\/\//.test(source)) {
    const response = await fetch(source).catch((error: unknown) => {
      throw new AnnalError(
        "ANNAL_FILE_UNREADABLE",
        `cannot fetch the keys from ${source}: ${(error as Error).message}`,
        { cause: error },
      );
    });
    if (!response.ok) {
      throw new AnnalError(
        "ANNAL_FILE_UNREADABLE",
        `cannot fetch the keys from ${source}: HTTP ${response.status}`,
      );
    }
    text = await response.text();
  } else {
    text = await readText(source, "the keys");
  }
  try {
    return JSON.parse(text) as { keys?: Record<string, unknown>[] };
  } catch {
    throw new AnnalError("ANNAL_FILE_UNREADABLE", `the keys at ${source} are not a JSON JWK set`);
  }
}

/**
 * `annal verify-export <file> <signature> --keys <file|url>`: checks a signed export with the
 * public keys alone, and prints what its signature says.
 */
export async function runVerifyExport(args: readonly string[], output: Output): Promise<number> {
  const { values, positionals } = parseCommandLine(args, VERIFY_EXPORT);
  const [file, signatureFile] = positionals as [string, string];
  if (values.keys === undefined) {
    throw new UsageError(
      "verify-export needs --keys: the public keys, a file or a URL ending in /api/keys",
    );
  }
  const keys = await readKeys(values.keys);
  const signature = await readText(signatureFile, "the signature");
  const statement = await verifyExport(file, signature, keys);
  const head = statement.chainHead
    ? `chain head at event ${statement.chainHead.position}: ${statement.chainHead.hash}`
    : "no chain head yet";
  output.out(
    `${file}: the signature holds (key ${statement.kid}, signed ${statement.signedAt}); ${statement.bytes} bytes reflecting the log at event ${statement.logPosition.position}; ${head}`,
  );
  return 0;
}

export const command: CommandModule = { run: runVerifyExport };
