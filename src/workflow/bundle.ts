import { createHash } from "node:crypto";
import { builtinModules } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build, type BuildOptions } from "esbuild";
import { AnnalError } from "../errors/index.ts";
import { codeFile } from "../package-root.ts";

/** A definition file bundled: the code, and its SHA-256 (hex), the version's identity. */
export interface Bundle {
  readonly hash: string;
  readonly code: string;
}

/**
 * esbuild's options for bundling a user's file (a workflow definition, the rules file): its
 * own imports inside (relative files and npm packages), `annal`, Node's built-ins and the
 * `shared` packages outside, bound to annal's own copies by `loadBundle`.
 */
export function bundleOptions(
  file: string,
  options: { readonly shared?: readonly string[] } = {},
): BuildOptions & { write: false } {
  const shared = (options.shared ?? []).flatMap((name) => [name, `${name}/*`]);
  return {
    entryPoints: [file],
    absWorkingDir: path.dirname(file),
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node22",
    write: false,
    external: ["annal", "annal/*", ...shared, ...builtinModules, "node:*"],
    logLevel: "silent",
    legalComments: "none",
    charset: "utf8",
  };
}

/** Where esbuild's first error points: its text, and the file and line when it names them. */
export function firstBuildError(
  error: unknown,
): { text: string; file?: string; line?: number } | undefined {
  const first = (
    error as {
      errors?: { text: string; location?: { file: string; line: number } | null }[];
    }
  ).errors?.[0];
  if (!first) return undefined;
  return first.location
    ? { text: first.text, file: first.location.file, line: first.location.line }
    : { text: first.text };
}

/**
 * Bundles a definition file with esbuild (`bundleOptions`). The hash is of the code with
 * esbuild's `// <path>` module markers taken out, so it depends on what the code is, not on
 * where the project or its `node_modules` happen to lie.
 *
 * @throws AnnalError `WF_DEFINITION_INVALID` naming the file and esbuild's first error.
 */
export async function bundleDefinition(file: string): Promise<Bundle> {
  let output: string;
  try {
    const result = await build(bundleOptions(file));
    output = result.outputFiles[0]?.text ?? "";
  } catch (error) {
    const first = firstBuildError(error);
    throw new AnnalError(
      "WF_DEFINITION_INVALID",
      `${file}: it does not bundle${first ? `: ${first.text}${first.line === undefined ? "" : ` (line ${first.line})`}` : ""}`,
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
const ANNAL_FACE = pathToFileURL(codeFile("index.ts")).href;

/** The URL a bundle's import of `specifier` is bound to, or undefined to leave it as it is. */
function boundSpecifier(specifier: string, shared: readonly string[]): string | undefined {
  if (specifier === "annal") return ANNAL_FACE;
  const name = shared.find((pkg) => specifier === pkg || specifier.startsWith(`${pkg}/`));
  return name === undefined ? undefined : import.meta.resolve(specifier);
}

/**
 * Loads a bundle as a module: its `annal` imports bound to this copy of annal, so the SDK's
 * classes (`NonRetryableError`, ...) are the engine's own, and the `shared` packages bound to
 * annal's copies (a bundle is a `data:` module, which cannot resolve packages itself).
 */
export async function loadBundle(
  code: string,
  options: { readonly shared?: readonly string[] } = {},
): Promise<Record<string, unknown>> {
  const shared = options.shared ?? [];
  const bound = code.replace(
    /(\bfrom\s*|\bimport\s*\(\s*)(["'])([^"'\n]+)\2/g,
    (match, before: string, quote: string, specifier: string) => {
      const url = boundSpecifier(specifier, shared);
      return url === undefined ? match : `${before}${quote}${url}${quote}`;
    },
  );
  return (await import(
    `data:text/javascript;base64,${Buffer.from(bound, "utf8").toString("base64")}`
  )) as Record<string, unknown>;
}
