import { SourceMap } from "node:module";
import path from "node:path";
import { build, type BuildOptions, type BuildResult } from "esbuild";
import { AnnalError, isAnnalError } from "../errors/index.ts";
import { bundleOptions, firstBuildError, loadBundle } from "../workflow/index.ts";
import { isEndpoints, type Endpoints } from "./define.ts";

/** The rules file, loaded: its `endpoints` export and what it was built from. */
export interface RulesModule {
  readonly file: string;
  readonly endpoints: Endpoints;
  /** Every file of the project the bundle was made of (the rules file and its imports). */
  readonly inputs: readonly string[];
  /** Maps a place in the bundle back to the rules file or the import it came from. */
  readonly locate: (error: unknown) => { file: string; line: number } | undefined;
}

/** Packages a rules file shares with annal, so that `HTTPException` and `Hono` are annal's. */
const SHARED = ["hono", "@hono/valibot-validator", "valibot"];

/** esbuild's options for the rules file: workflows' bundling, with a source map for errors. */
export function rulesBuildOptions(file: string): BuildOptions & { write: false } {
  return {
    ...bundleOptions(file, { shared: SHARED }),
    sourcemap: "inline",
    sourcesContent: false,
    metafile: true,
  };
}

/**
 * Bundles the rules file with esbuild and imports it.
 *
 * @throws AnnalError `ANNAL_RULES_INVALID` naming the file and line: it does not bundle,
 *   throws while it runs, or exports no `endpoints` built with `defineEndpoints`.
 */
export async function loadRules(file: string): Promise<RulesModule> {
  let result: BuildResult<{ write: false; metafile: true }>;
  try {
    result = (await build(rulesBuildOptions(file))) as typeof result;
  } catch (error) {
    throw bundleFailure(file, error);
  }
  return importRules(file, result);
}

/** The error for a rules file that does not bundle, at esbuild's first error. */
export function bundleFailure(file: string, error: unknown): AnnalError {
  const first = firstBuildError(error);
  const where = first?.file ? path.resolve(path.dirname(file), first.file) : file;
  return rulesInvalid(
    { file: where, ...(first?.line === undefined ? {} : { line: first.line }) },
    `it does not bundle: ${first?.text ?? String(error)}`,
    error,
  );
}

/** Imports a bundle of the rules file and checks its export. */
export async function importRules(
  file: string,
  result: { outputFiles?: { text: string }[]; metafile?: { inputs: Record<string, unknown> } },
): Promise<RulesModule> {
  const code = result.outputFiles?.[0]?.text ?? "";
  const dir = path.dirname(file);
  const inputs = Object.keys(result.metafile?.inputs ?? {})
    .map((input) => path.resolve(dir, input))
    .filter((input) => !input.split(path.sep).includes("node_modules"));
  const locate = locator(code, dir);
  let module: Record<string, unknown>;
  try {
    module = await loadBundle(code, { shared: SHARED });
  } catch (error) {
    throw failureAt(file, locate, error, "it throws while it loads");
  }
  const endpoints = module.endpoints;
  if (!isEndpoints(endpoints)) {
    throw rulesInvalid(
      { file },
      endpoints === undefined
        ? "it exports no `endpoints`"
        : "its `endpoints` export is not defineEndpoints(...)",
    );
  }
  return { file, endpoints, inputs, locate };
}

/** `ANNAL_RULES_INVALID` for an error thrown by the rules file's code, at its line. */
export function failureAt(
  file: string,
  locate: RulesModule["locate"],
  error: unknown,
  what: string,
): AnnalError {
  const at = locate(error) ?? { file };
  const message = isAnnalError(error)
    ? `${error.code}: ${error.message}`
    : error instanceof Error
      ? error.message
      : String(error);
  return rulesInvalid(at, `${what}: ${message}`, error);
}

function rulesInvalid(
  at: { file: string; line?: number },
  problem: string,
  cause?: unknown,
): AnnalError {
  return new AnnalError(
    "ANNAL_RULES_INVALID",
    `${at.file}${at.line === undefined ? "" : `:${at.line}`}: ${problem}`,
    {
      ...(cause === undefined ? {} : { cause }),
      details: { file: at.file, ...(at.line === undefined ? {} : { line: at.line }) },
    },
  );
}

/** A bundle's frame in a stack: `data:text/javascript;base64,...:<line>:<column>`. */
const BUNDLE_FRAME = /data:text\/javascript;base64,[A-Za-z0-9+/=]+:(\d+):(\d+)/;
const INLINE_MAP = /\/\/# sourceMappingURL=data:application\/json;base64,([A-Za-z0-9+/=]+)\s*$/;

/** Where in the project an error thrown by the bundle's code was thrown, by its source map. */
function locator(code: string, dir: string): RulesModule["locate"] {
  const encoded = INLINE_MAP.exec(code)?.[1];
  let map: SourceMap | undefined;
  return (error) => {
    const stack = (error as { stack?: unknown } | null)?.stack;
    const frame = typeof stack === "string" ? BUNDLE_FRAME.exec(stack) : null;
    if (!frame || encoded === undefined) return undefined;
    map ??= new SourceMap(JSON.parse(Buffer.from(encoded, "base64").toString("utf8")));
    const entry = map.findEntry(Number(frame[1]) - 1, Number(frame[2]) - 1);
    if (!("originalSource" in entry) || !entry.originalSource) return undefined;
    const source = entry.originalSource.startsWith("file://")
      ? new URL(entry.originalSource).pathname
      : path.resolve(dir, entry.originalSource);
    return { file: source, line: entry.originalLine + 1 };
  };
}
