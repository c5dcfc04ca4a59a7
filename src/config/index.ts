/**
 * annal's configuration: the one gate from what the user wrote in `annal.toml` to a resolved,
 * typed `AnnalConfig`. Sections and their options, each with its meaning and default, are
 * described in their schemas in `sections/`, and in `docs/configuration.md`, which
 * `reference/` generates from them.
 */
export { parseDuration } from "./duration.ts";
export { ConfigError } from "./errors.ts";
export { DEMO_CONFIG_PATH } from "./locate.ts";
export { loadConfig, type LoadConfigOptions } from "./load.ts";
export { type AnnalConfig, type ConfigSource, parseConfig, type ParseSource } from "./parse.ts";
export { SECRET_KEYS } from "./secrets.ts";
export { serverUrl } from "./server-url.ts";
export {
  BUILT_IN_REDACTED_ATTRIBUTES,
  IDENTITY_ATTRIBUTES,
  type DirectoryConfig,
} from "./sections/directory.ts";
export { isEnvReference } from "./env-references.ts";
export { formatKeyPath } from "./key-path.ts";
export type { GraphqlConfig } from "./sections/graphql.ts";
export type { RestBackendConfig } from "./sections/rest-backends.ts";
export { configReference } from "./reference/index.ts";
export type { WorkflowsConfig } from "./sections/workflows.ts";
export type { AuthConfig } from "./sections/auth.ts";
export { ACCESS_NAME, type AuthorizationConfig } from "./sections/authorization.ts";
export type { RulesConfig } from "./sections/rules.ts";
export type { MessagingConfig } from "./sections/messaging.ts";
export type { TemplatingConfig } from "./sections/templating.ts";
export { calendarsSection } from "./sections/calendars.ts";
export { reviewsSection } from "./sections/reviews.ts";
export { authorizationSection } from "./sections/authorization.ts";
