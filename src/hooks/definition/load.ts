import { readdir } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { isAnnalError } from "../../errors/index.ts";
import { bundleOptions, loadBundle } from "../../workflow/index.ts";
import { isHooks } from "./define.ts";
import { HooksDirectoryNotFoundError, HooksInvalidError } from "../errors.ts";
import { resolveHooks, type HooksRegistry, type ResolveOptions } from "./registry.ts";
import type { Hooks } from "./types.ts";

export interface LoadHooksOptions extends ResolveOptions {
  /**
   * The hooks directory (`[hooks] dir`, absolute). Undefined (no `[hooks]` table): no hooks,
   * and an empty registry.
   */
  readonly dir: string | undefined;
}

const HOOKS_FILE = /^[^._].*(?<!\.d)\.(?:ts|js|mts|mjs)$/;

/**
 * Imports every `.ts`/`.js` file in the hooks directory (not its subdirectories; names
 * starting with `.` or `_` are skipped, so helpers can live beside the hooks) and resolves
 * their default exports into a registry.
 *
 * @throws HooksDirectoryNotFoundError `ANNAL_HOOKS_DIR_NOT_FOUND`; HooksInvalidError
 *   `ANNAL_HOOKS_INVALID` naming the file and the problem (it does not load, has no
 *   `defineHooks` default export, or the definition is wrong); any error of `resolveHooks`.
 */
export async function loadHooks(options: LoadHooksOptions): Promise<HooksRegistry> {
  if (options.dir === undefined) return resolveHooks([], options);
  const dir = options.dir;
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true }))
      .filter((entry) => entry.isFile() && HOOKS_FILE.test(entry.name))
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new HooksDirectoryNotFoundError(dir);
    throw error;
  }
  const definitions: { hooks: Hooks; file: string }[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    definitions.push({ hooks: await importHooksFile(file), file });
  }
  return resolveHooks(definitions, options);
}

async function importHooksFile(file: string): Promise<Hooks> {
  let module: Record<string, unknown>;
  try {
    module = file.split(path.sep).includes("node_modules")
      ? await importBundled(file)
      : ((await import(pathToFileURL(file).href)) as Record<string, unknown>);
  } catch (error) {
    // `defineHooks` checks its options when the file runs: its error already says what is
    // wrong. Compared by code: the file may have imported another copy of annal's module.
    if ((error as { code?: unknown } | null)?.code === "ANNAL_HOOKS_INVALID") {
      throw new HooksInvalidError((error as Error).message, { file, cause: error });
    }
    const message = isAnnalError(error)
      ? `${error.code}: ${error.message}`
      : error instanceof Error
        ? error.message
        : String(error);
    throw new HooksInvalidError(`the file does not load: ${message}`, { file, cause: error });
  }
  const hooks = module.default;
  if (!isHooks(hooks)) {
    throw new HooksInvalidError(
      hooks === undefined
        ? "the file has no default export"
        : "the default export is not defineHooks({...})",
      { file, hint: "end the file with: export default defineHooks({ name, webhooks, provider })" },
    );
  }
  return hooks;
}

/**
 * A hooks file under node_modules (the demo's, when annal is an installed package): Node.js
 * strips no types there, so it is bundled with esbuild as a workflow is, its `annal` imports
 * bound to this copy of annal.
 */
async function importBundled(file: string): Promise<Record<string, unknown>> {
  const result = await build(bundleOptions(file));
  return loadBundle(result.outputFiles[0]?.text ?? "");
}
