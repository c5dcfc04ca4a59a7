/**
 * The GraphQL channel: the gateway over the directory (`gateway/`: schema assembly from
 * annal's SDL and the deployment's files, the directives, the loaders, `where`, the reads of
 * the projections and of the history), the operations (`operations/`), the limits, and the
 * Fastify plugin serving `/graphql`.
 */
export { graphqlPlugin, type GraphqlExecution, type GraphqlExecutor } from "./plugin.ts";
export type { GraphqlPluginOptions } from "./options.ts";
export { buildGateway, BUILT_IN_SCHEMA_DIR, type Gateway } from "./gateway/schema.ts";
export type { DirectoryWrite, GatewayContext, Viewer } from "./context.ts";
export {
  BadUserInputError,
  DirectoryNotConfiguredError,
  GatewaySchemaError,
  GRAPHQL_CODES,
  RestBackendError,
  type GraphqlCode,
} from "./errors.ts";
export { recordMutationWrite } from "./gateway/write-cause.ts";
