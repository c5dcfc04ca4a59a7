/**
 * Custom endpoints: the rules file (`[rules] file`, `defineEndpoints`), served under `/api`
 * with Hono, its bindings (GraphQL as the caller, the viewer, mail, templates), hot reload in
 * development. See docs/endpoints.md.
 */
export { defineEndpoints, gql, isEndpoints, publicRoute } from "./define.ts";
export type { Endpoints, EndpointsFactory, FetchEndpoints } from "./define.ts";
export type { EndpointsApp, EndpointsContext } from "./context.ts";
export type { EndpointBindings } from "./bindings.ts";
export type { EndpointViewer, TokenInfo } from "./viewer.ts";
export type { MailMessage, Messaging, SendResult } from "./messaging.ts";
export type { Templating } from "./templating.ts";
export { loadRules, type RulesModule } from "./load.ts";
export { checkEndpoints } from "./check.ts";
export { ANNAL_API_PATHS } from "./routes.ts";
export { endpointsPlugin, type EndpointsPluginOptions, type PreparedRules } from "./plugin.ts";
