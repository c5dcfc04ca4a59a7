/**
 * The directory REST channel: search, lookup, change history and export of directory entries
 * over HTTP, read from the projections, with its OpenAPI description and documentation.
 *
 * The `annal token` commands are in `./cli.ts`, imported by the CLI directly (they open the
 * database through `src/app/`, which registers this plugin: no import cycle).
 */
export { restPlugin } from "./plugin.ts";
export type { RestDeps } from "./context.ts";
export {
  checkTypeNames,
  typeNamesOf,
  TypeNameCollisionError,
  type TypeNames,
} from "./type-names.ts";
export { REST_ERROR_CODES } from "./openapi/error-codes.ts";
export { describeFromConfig } from "./openapi/offline.ts";
