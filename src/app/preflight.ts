import type { AnnalConfig } from "../config/index.ts";
import { loadRules, type PreparedRules } from "../endpoints/index.ts";
import { buildGateway, type Gateway } from "../graphql/index.ts";
import { loadHooks, type HooksRegistry } from "../hooks/index.ts";
import { checkTypeNames } from "../rest/index.ts";
import { prepareDefinitions, type PreparedDefinition } from "../workflow/index.ts";
import { prepareReviewItemDefinition } from "../reviews/index.ts";

/** What the configuration's own files gave, checked: start serves them, verify only reads them. */
export interface CheckedConfiguration {
  readonly hooks: HooksRegistry;
  readonly gateway: Gateway;
  /** The workflow definitions of `[workflows] dir`, bundled and loaded (not yet deployed). */
  readonly workflows: readonly PreparedDefinition[];
  /** The rules file (`[rules] file`), loaded unless in development (its watcher loads it). */
  readonly rules: PreparedRules | undefined;
}

/**
 * Every check of the configuration and the files that go with it that stops `annal start`
 * before it serves anything, in one place so that `annal verify` refuses exactly what start
 * refuses: entry type names that collide as REST paths or OpenAPI names, hooks files that
 * do not load, a GraphQL gateway schema (or its translations) that does not build, and
 * workflow definition files that do not bundle or export a definition, and a rules file that
 * does not bundle, load or export `endpoints` (in development it is watched instead, and a
 * failure is logged, not fatal).
 *
 * @example
 * const { hooks, gateway } = await checkConfiguration(config);
 *
 * @throws TypeNameCollisionError `ANNAL_TYPE_NAME_COLLISION`, the hooks loader's errors
 *   (`ANNAL_HOOKS_...`), GatewaySchemaError `ANNAL_GRAPHQL_SCHEMA_INVALID`,
 *   `ANNAL_RULES_INVALID` naming the rules file and line.
 */
export async function checkConfiguration(
  config: AnnalConfig,
  options: { readonly development?: boolean } = {},
): Promise<CheckedConfiguration> {
  checkTypeNames(config.directory?.types ?? []);
  const hooks = await loadHooks({ dir: config.hooks?.dir });
  const gateway = await buildGateway(config);
  const workflows = await prepareDefinitions(config.workflows?.dir);
  // Access reviews run their items on annal's own definition, deployed beside the files'.
  if (config.reviews.length > 0) workflows.push(await prepareReviewItemDefinition());
  const development = options.development ?? false;
  const file = config.rules?.file;
  const rules =
    file === undefined
      ? undefined
      : { file, development, module: development ? undefined : await loadRules(file) };
  return { hooks, gateway, workflows, rules };
}
