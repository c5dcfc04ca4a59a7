import type { Pool } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import { definitionStream } from "../events/index.ts";
import { readStream } from "../store/index.ts";
import { loadBundle } from "./bundle.ts";
import { definitionProblem, isWorkflowDefinition, type WorkflowDefinition } from "./define.ts";

/** A deployed definition: its identity and, once loaded, its code. */
export interface DeployedDefinition {
  readonly name: string;
  readonly version: number;
  readonly hash: string;
  readonly definition: WorkflowDefinition;
  /** The file it was deployed from now; undefined for a stored version no file has any more. */
  readonly file?: string;
}

/**
 * The definitions this process knows: those its `[workflows] dir` deploys now (new starts take
 * the highest version of each name), and every stored version, loaded from its bundle by hash
 * the first time an instance of it runs here, so a deploy never strands an instance.
 */
export class Definitions {
  readonly #pool: Pool;
  readonly #current: ReadonlyMap<string, DeployedDefinition>;
  readonly #byHash = new Map<string, Promise<WorkflowDefinition>>();

  constructor(pool: Pool, deployed: readonly DeployedDefinition[]) {
    this.#pool = pool;
    const current = new Map<string, DeployedDefinition>();
    for (const entry of deployed) {
      this.#byHash.set(entry.hash, Promise.resolve(entry.definition));
      const before = current.get(entry.name);
      if (!before || before.version < entry.version) current.set(entry.name, entry);
    }
    this.#current = current;
  }

  /** What new starts of `name` take: the highest version deployed from the files now. */
  current(name: string): DeployedDefinition | undefined {
    return this.#current.get(name);
  }

  /** The catalog: one entry per name, its current version. */
  catalog(): readonly DeployedDefinition[] {
    return [...this.#current.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** A stored version of `name`, whether or not a file deploys it now. */
  async version(name: string, version: number): Promise<DeployedDefinition | undefined> {
    const current = this.#current.get(name);
    if (current?.version === version) return current;
    const [deployed] = await readStream(this.#pool, definitionStream(name, version), { limit: 1 });
    const hash = (deployed?.data as { hash?: string } | undefined)?.hash;
    if (!hash) return undefined;
    return { name, version, hash, definition: await this.byHash(hash) };
  }

  /** The code of the bundle `hash`, loaded once per process. */
  byHash(hash: string): Promise<WorkflowDefinition> {
    let loaded = this.#byHash.get(hash);
    if (!loaded) {
      loaded = this.#load(hash);
      this.#byHash.set(hash, loaded);
      // A failure is not kept: the next instance tries again.
      loaded.catch(() => this.#byHash.delete(hash));
    }
    return loaded;
  }

  async #load(hash: string): Promise<WorkflowDefinition> {
    const found = await this.#pool.query<{ bundle: string }>(
      "SELECT bundle FROM workflow_bundles WHERE hash = $1",
      [hash],
    );
    const code = found.rows[0]?.bundle;
    if (code === undefined) {
      throw new AnnalError("WF_DEFINITION_INVALID", `no stored bundle has the hash ${hash}`);
    }
    return definitionOf(await loadBundle(code), `bundle ${hash}`);
  }
}

/** The definition a loaded bundle exports (as its default export), checked. */
export function definitionOf(module: Record<string, unknown>, where: string): WorkflowDefinition {
  const definition = module.default;
  if (!isWorkflowDefinition(definition)) {
    throw new AnnalError(
      "WF_DEFINITION_INVALID",
      `${where}: its default export is not a workflow definition`,
      { hint: "export default defineWorkflow({ name, version, parameters, run })" },
    );
  }
  const problem = definitionProblem(definition);
  if (problem) throw new AnnalError("WF_DEFINITION_INVALID", `${where}: ${problem}`);
  return definition;
}
