import { BUILT_IN_REDACTED_ATTRIBUTES, type AnnalConfig } from "../../config/index.ts";
import { AttributeCatalog } from "../catalog.ts";
import { checkTypeNames } from "../type-names.ts";
import { openApiDocument } from "./document.ts";

/**
 * The channel's OpenAPI description from the configuration alone, without a database or a
 * directory: the configured types with their attributes described generically. For linting
 * the document's shape (`npm run check`); a running annal serves the full one at `/api.json`.
 */
export function describeFromConfig(config: AnnalConfig, version: string): Record<string, unknown> {
  const types = config.directory?.types ?? [];
  const names = checkTypeNames(types);
  const redacted = config.directory?.capture.redact ?? [...BUILT_IN_REDACTED_ATTRIBUTES];
  return openApiDocument({
    version,
    types: types.map((type, index) => ({
      names: names[index]!,
      base: type.base,
      filter: type.filter,
    })),
    catalog: new AttributeCatalog([], redacted, false),
    schema: undefined,
    limits: config.rest,
  });
}
