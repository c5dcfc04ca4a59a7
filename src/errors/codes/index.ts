import { AUDIT_CODES } from "./audit.ts";
import { AUTH_CODES } from "./auth.ts";
import { DIRECTORY_CODES } from "./directory.ts";
import { ENDPOINT_CODES } from "./endpoints.ts";
import { EXERCISE_CODES } from "./exercise.ts";
import { EXTRACT_CODES } from "./extract.ts";
import { GRAPHQL_ERROR_CODES } from "./graphql.ts";
import { WEBHOOK_CODES } from "./hooks.ts";
import { HTTP_CODES } from "./http.ts";
import { PROGRAM_CODES } from "./program.ts";
import { REST_CODES } from "./rest.ts";
import { REVIEW_CODES } from "./reviews.ts";
import { SCENARIO_CODES } from "./scenarios.ts";

import { SIMULATE_CODES } from "./simulate.ts";
import { STARTER_CODES } from "./starter.ts";
import type { ErrorCodeSpec } from "./spec.ts";
import { WORKFLOW_CODES, WORKFLOW_TEST_CODES } from "./workflow.ts";

export type { ErrorCodeSpec, ErrorSurface } from "./spec.ts";

/**
 * Every code an `AnnalError` can carry: its HTTP status, its meaning, and where it helps a
 * hint. The OpenAPI document, `/readyz`, the GraphQL surface and `docs/errors.md` read it;
 * one file per area, joined here.
 */
export const ERROR_CATALOG = {
  ...HTTP_CODES,
  ...REST_CODES,
  ...DIRECTORY_CODES,
  ...WEBHOOK_CODES,
  ...GRAPHQL_ERROR_CODES,
  ...PROGRAM_CODES,
  ...WORKFLOW_CODES,
  ...WORKFLOW_TEST_CODES,
  ...AUTH_CODES,
  ...ENDPOINT_CODES,
  ...STARTER_CODES,
  ...EXERCISE_CODES,

  ...SCENARIO_CODES,

  ...SIMULATE_CODES,
  ...REVIEW_CODES,

  ...AUDIT_CODES,
  ...EXTRACT_CODES,
} as const satisfies Record<string, ErrorCodeSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

/** The catalog's entry for `code`, or undefined for a code of the user's own. */
export function catalogEntry(code: string): ErrorCodeSpec | undefined {
  return Object.hasOwn(ERROR_CATALOG, code) ? ERROR_CATALOG[code as ErrorCode] : undefined;
}

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CATALOG, code);
}
