import { ERROR_CATALOG, type ErrorCodeSpec } from "../../errors/index.ts";

/**
 * Every code the REST channel answers with, its status and what it means: the catalog's
 * codes of the `rest` surface, which the OpenAPI description documents (and a test holds the
 * channel's code to).
 */
export const REST_ERROR_CODES: Readonly<Record<string, ErrorCodeSpec>> = Object.fromEntries(
  Object.entries(ERROR_CATALOG).filter(([, spec]) =>
    ((spec as ErrorCodeSpec).surfaces ?? []).includes("rest"),
  ),
);
