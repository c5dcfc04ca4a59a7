import { readdir } from "node:fs/promises";
import path from "node:path";
import { withTransaction, type Pool } from "../db/index.ts";
import { annalEvent, definitionStream } from "../events/index.ts";
import { AnnalError } from "../errors/index.ts";
import type { Logger } from "../logger.ts";
import { WrongExpectedVersionError, type EventStore } from "../store/index.ts";
import { bundleDefinition, loadBundle } from "./bundle.ts";
import type { WorkflowDefinition } from "./define.ts";
import { Definitions, definitionOf, type DeployedDefinition } from "./definitions.ts";

const DEFINITION_FILE = /^[^._].*\.(?:[cm]?ts|[cm]?js)$/;

/** A definition file bundled and loaded, ready to deploy. */
export interface PreparedDefinition {
  readonly file: string;
  readonly bundle: { readonly hash: string; readonly code: string };
  readonly definition: WorkflowDefinition;
}

/**
 * Bundles and loads every definition file of `dir` (`*.ts`, `*.js` directly in it; not `_*`,
 * `.*` or `*.test.*`), checking each exports a definition and no two share a name and
 * version. Needs no database: `annal verify` runs it as start-up does.
 *
 * @throws AnnalError `WF_DEFINITION_INVALID` for a file that does not bundle or does not
 *   export a definition, or two files with one name and version.
 */
export async function prepareDefinitions(dir: string | undefined): Promise<PreparedDefinition[]> {
  const files = dir === undefined ? [] : await definitionFiles(dir);
  const prepared: PreparedDefinition[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    const bundle = await bundleDefinition(file);
    const relative = path.relative(dir!, file);
    const definition = definitionOf(await loadBundle(bundle.code), relative);
    const id = `${definition.name}@${definition.version}`;
    if (seen.has(id)) {
      throw new AnnalError(
        "WF_DEFINITION_INVALID",
        `${relative} and ${seen.get(id)} both define ${id}`,
        { hint: "give one of them another name or version" },
      );
    }
    seen.set(id, relative);
    prepared.push({ file: relative, bundle, definition });
  }
  return prepared;
}

/**
 * Deploys prepared definitions: stores each bundle and a `WorkflowDefinitionDeployed` event
 * under its name and version, once. A name and version already deployed with another bundle
 * stops start-up: changed code needs a new version, so that instances of the old one replay
 * the code they started with.
 *
 * @throws AnnalError `WF_DEFINITION_BUNDLE_CHANGED` naming the definition, the version and both
 *   hashes; what `prepareDefinitions` throws when given a directory.
 */
export async function deployDefinitions(options: {
  readonly pool: Pool;
  readonly store: EventStore;
  /** The definitions to deploy, or the directory to prepare them from. */
  readonly prepared?: readonly PreparedDefinition[];
  readonly dir?: string | undefined;
  readonly log: Pick<Logger, "info">;
}): Promise<Definitions> {
  const prepared = options.prepared ?? (await prepareDefinitions(options.dir));
  const deployed: DeployedDefinition[] = [];
  for (const { file, bundle, definition } of prepared) {
    const fresh = await storeDeployment(options, definition.name, definition.version, bundle, file);
    const id = `${definition.name}@${definition.version}`;
    if (fresh) options.log.info({ workflow: id, hash: bundle.hash }, `deployed workflow ${id}`);
    deployed.push({
      name: definition.name,
      version: definition.version,
      hash: bundle.hash,
      definition,
      file,
    });
  }
  return new Definitions(options.pool, deployed);
}

async function definitionFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((error: unknown) => {
    throw new AnnalError("WF_DEFINITION_INVALID", `the workflows directory ${dir} cannot be read`, {
      cause: error,
      hint: "create it, or correct [workflows] dir in annal.toml",
    });
  });
  return entries
    .filter((e) => e.isFile() && DEFINITION_FILE.test(e.name) && !/\.test\./.test(e.name))
    .map((e) => path.join(dir, e.name))
    .sort();
}

/** Stores the deployment unless it is stored; true when this call stored it. */
async function storeDeployment(
  deps: { readonly pool: Pool; readonly store: EventStore },
  name: string,
  version: number,
  bundle: { readonly hash: string; readonly code: string },
  file: string,
): Promise<boolean> {
  const stream = definitionStream(name, version);
  for (;;) {
    const stored = await deps.store.readStream(stream, { limit: 1 });
    const first = stored[0];
    if (first) {
      const hash = (first.data as { hash: string }).hash;
      if (hash !== bundle.hash) {
        throw new AnnalError(
          "WF_DEFINITION_BUNDLE_CHANGED",
          `workflow ${name} version ${version} is deployed with bundle ${hash}, and its code now bundles to ${bundle.hash}`,
          {
            hint: `raise the version of ${name} (in ${file}): instances of version ${version} go on with the code they started with`,
            details: { definition: name, version, deployedHash: hash, bundleHash: bundle.hash },
          },
        );
      }
      return false;
    }
    try {
      await withTransaction(deps.pool, async (tx) => {
        await tx.query(
          "INSERT INTO workflow_bundles (hash, bundle) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING",
          [bundle.hash, bundle.code],
        );
        await deps.store.appendToStream(
          stream,
          [
            annalEvent("WorkflowDefinitionDeployed", {
              name,
              version,
              hash: bundle.hash,
              file,
              bytes: Buffer.byteLength(bundle.code),
            }),
          ],
          { tx, expectedVersion: "no_stream" },
        );
      });
      return true;
    } catch (error) {
      // Another process deployed it first: compare with what it stored.
      if (!(error instanceof WrongExpectedVersionError)) throw error;
    }
  }
}
