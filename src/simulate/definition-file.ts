import { randomUUID } from "node:crypto";
import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { AnnalError } from "../errors/index.ts";
import {
  bundleDefinition,
  definitionOf,
  loadBundle,
  type WorkflowDefinition,
} from "../workflow/index.ts";

/** A definition file read for a simulation: bundled and loaded as annal would deploy it. */
export interface SimulatedDefinition {
  readonly file: string;
  /** The SHA-256 of its bundle, as a deploy would store it. */
  readonly hash: string;
  readonly definition: WorkflowDefinition;
}

/**
 * Bundles and loads the definition file `file` (esbuild, as start-up does), deploying nothing.
 *
 * @throws AnnalError `ANNAL_SIMULATE_FILE_INVALID` for a file that is not there, does not
 *   bundle, or does not export a definition (the deploy's own message is its cause).
 */
export async function loadDefinitionFile(file: string): Promise<SimulatedDefinition> {
  const absolute = path.resolve(file);
  const found = await stat(absolute).catch(() => undefined);
  if (!found?.isFile()) {
    throw new AnnalError("ANNAL_SIMULATE_FILE_INVALID", `${file}: there is no such file`);
  }
  try {
    const bundle = await bundleDefinition(absolute);
    const definition = definitionOf(await loadBundle(bundle.code), file);
    return { file, hash: bundle.hash, definition };
  } catch (error) {
    throw new AnnalError(
      "ANNAL_SIMULATE_FILE_INVALID",
      error instanceof Error ? error.message : String(error),
      { cause: error },
    );
  }
}

/**
 * A definition given as its source (GraphQL's `simulateWorkflow`): written to a file of its
 * own under `<cwd>/.annal/simulations/` (where the project's packages resolve: `annal`, `zod`),
 * loaded as `loadDefinitionFile` loads one, and removed.
 *
 * @throws AnnalError `ANNAL_SIMULATE_FILE_INVALID` as `loadDefinitionFile`.
 */
export async function loadDefinitionSource(source: string): Promise<SimulatedDefinition> {
  const dir = path.join(process.cwd(), ".annal", "simulations");
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${randomUUID()}.ts`);
  await writeFile(file, source);
  try {
    const loaded = await loadDefinitionFile(file);
    return { ...loaded, file: "(source)" };
  } finally {
    await rm(file, { force: true });
  }
}
