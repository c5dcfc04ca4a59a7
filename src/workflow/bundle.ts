import { createHash } from "node:crypto";
import { builtinModules } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { AnnalError } from "../errors/index.ts";

/** A definition file bundled: the code, and its SHA-256 (hex), the version's identity. */
export interface Bundle {
  readonly hash: string;
  readonly code: string;
}

/**
 * Bundles a definition file with esbuild: its own imports inside (relative files and npm
 * packages), `annal` and Node's built-ins outside. The hash is of the code with esbuild's
 * `// <path>` module markers taken out, so it depends on what the code is, not on where the
 * project or its `node_modules` happen to lie.
 *
 * @throws AnnalError `WF_DEFINITION_INVALID` naming the file and esbuild's first error.
 */
export async function bundleDefinition(file: string): Promise<Bundle> {
  let output: string;
  try {
    const result = await build({
      entryPoints: [file],
      absWorkingDir: path.dirname(file),
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node22",
      write: false,
      external: ["annal", "annal/*", ...builtinModules, "node:*"],
      logLevel: "silent",
      legalComments: "none",
      charset: "utf8",
    });
    output = result.outputFiles[0]?.text ?? "";
  } catch (error) {
    const first = (error as { errors?: { text: string; location?: { line: number } | null }[] })
      .errors?.[0];
    throw new AnnalError(
      "WF_DEFINITION_INVALID",
      `${file}: it does not bundle${first ? `: ${first.text}${first.location ? ` (line ${first.location.line})` : ""}` : ""}`,
      { cause: error, hint: "fix the definition file; annal bundles it with esbuild at start-up" },
    );
  }
  const code = output
    .split("\n")
    .filter((line) => !MODULE_MARKER.test(line))
    .join("\n");
  return { code, hash: createHash("sha256").update(code).digest("hex") };
}

/** esbuild's comment naming the module that follows, e.g. `// ../node_modules/zod/v4/x.js`. */
const MODULE_MARKER = /^\/\/ [^\s]+\.(?:[cm]?[jt]sx?|json)$/;

/** Where `annal` resolves for a bundle: this copy of annal's own package face. */
const ANNAL_FACE = pathToFileURL(path.resolve(import.meta.dirname, "../index.ts")).href;

/**
 * Loads a bundle as a module: its `annal` imports bound to this copy of annal, so the SDK's
 * classes (`NonRetryableError`, ...) are the engine's own.
 */
export async function loadBundle(code: string): Promise<Record<string, unknown>> {
  const bound = code.replace(/(\bfrom\s*|\bimport\s*\(\s*)(["'])annal\2/g, `$1$2${ANNAL_FACE}$2`);
  return (await import(
    `data:text/javascript;base64,${Buffer.from(bound, "utf8").toString("base64")}`
  )) as Record<string, unknown>;
}
