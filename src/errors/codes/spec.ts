/** Where an error can reach a user: what reads the catalog to document it. */
export type ErrorSurface =
  /** The REST channel: its OpenAPI document lists the code with its status. */
  | "rest"
  /** `GET /readyz`: a failed check names the code and its meaning. */
  | "readyz"
  /** Start-up: the process logs the code and stops. */
  | "startup";

/** One error code of the catalog. */
export interface ErrorCodeSpec {
  /** The HTTP status it answers with (a 4xx for the user's input, a 5xx for our fault). */
  readonly status: number;
  /**
   * Whose status it answers instead, when each error sets its own (`status` is then only the
   * default of an error that gives none), e.g. "the exception's": the docs show it in place of
   * `status`.
   */
  readonly statusFrom?: string;
  /** What happened, in a sentence a user reads: the docs, the OpenAPI document, `/readyz`. */
  readonly meaning: string;
  /** What to do about it, when that does not depend on the case (an error may give its own). */
  readonly hint?: string;
  /**
   * GraphQL's `extensions.code` when it is not the category of the status (see
   * `graphqlCategory`): the spec's workflow refusals keep their own code there.
   */
  readonly graphql?: string;
  readonly surfaces?: readonly ErrorSurface[];
}
