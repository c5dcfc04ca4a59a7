/**
 * The web application at `/app`: directory entries now and at past moments with their
 * history and diffs, the change feed, the workflow inbox, catalog and instances, and the
 * operators' pages. It reads only annal's public APIs (GraphQL, REST) with the session cookie.
 */
export { webPlugin, type WebPluginOptions } from "./plugin.ts";
export { buildWebAssets, type WebAsset } from "./assets.ts";
