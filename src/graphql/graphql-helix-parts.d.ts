// graphql-helix maps its subpaths (`graphql-helix/process-request`, …) to .mjs files whose
// declarations TypeScript does not find (they are .d.ts, not .d.mts): these give each part
// the declarations the package's index already has.
declare module "graphql-helix/get-graphql-parameters" {
  export { getGraphQLParameters } from "graphql-helix";
}
declare module "graphql-helix/process-request" {
  export { processRequest } from "graphql-helix";
}
declare module "graphql-helix/should-render-graphiql" {
  export { shouldRenderGraphiQL } from "graphql-helix";
}
declare module "graphql-helix/types" {
  export type { ExecutionPatchResult } from "graphql-helix";
}
