import type { AnnalConfig } from "../config/index.ts";
import { buildGateway, type Gateway } from "../graphql/index.ts";
import { loadHooks, type HooksRegistry } from "../hooks/index.ts";
import { checkTypeNames } from "../rest/index.ts";
import { prepareDefinitions, type PreparedDefinition } from "../workflow/index.ts";

/** What the configuration's own files gave, checked: start serves them, verify only reads them. */
export interface CheckedConfiguration {
  readonly hooks: HooksRegistry;
  readonly gateway: Gateway;
  /** The workflow definitions of `[workflows] dir`, bundled and loaded (not yet deployed). */
  readonly workflows: readonly PreparedDefinition[];
}

/**
 * Every check of the configuration and the files that go with it that stops `annal start`
 * before it serves anything, in one place so that `annal verify` refuses exactly what start
 * refuses: entry type names that collide as REST paths or OpenAPI names, hooks files that
 * do not load, a GraphQL gateway schema (or its translations) that does not build, and
 * workflow definition files that do not bundle or export a definition.
 *
 * @example
 * const { hooks, gateway } = await checkConfiguration(config);
 *
 * @throws TypeNameCollisionError `ANNAL_TYPE_NAME_COLLISION`, the hooks loader's errors
 *   (`ANNAL_HOOKS_...`), GatewaySchemaError `ANNAL_GRAPHQL_SCHEMA_INVALID`.
 */
export async function checkConfiguration(config: AnnalConfig): Promise<CheckedConfiguration> {
  checkTypeNames(config.directory?.types ?? []);
  const hooks = await loadHooks({ dir: config.hooks?.dir });
  const gateway = await buildGateway(config);
  const workflows = await prepareDefinitions(config.workflows?.dir);
  return { hooks, gateway, workflows };
}
