import { AnnalError, isAnnalError } from "../errors/index.ts";

export type WorkflowTestCode =
  | "WF_TEST_WAIT_TIMEOUT"
  | "WF_TEST_MUTATION_REJECTED"
  | "WF_TEST_BINDING_FIXTURE_MISSING"
  | "WF_TEST_UNSUPPORTED_CALL"
  | "WF_TEST_CHILD_DEFINITION_MISMATCH"
  | "WF_TEST_INSTANCE_ERRORED";

/**
 * Every failure of the workflow test driver: one of the spec's `WF_TEST_*` codes, a message
 * that says what the test saw, and for a refused command or an errored instance the cause.
 *
 * @example
 * await assert.rejects(flow.completeActivity("approve", { ok: true }, { as: "sam" }), {
 *   code: "WF_TEST_MUTATION_REJECTED",
 *   cause: { code: "WF_FORBIDDEN" },
 * });
 */
export class WorkflowTestError extends AnnalError {
  constructor(
    code: WorkflowTestCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(code, message, options);
  }
}

/** A command the engine refused, as the test sees it: its WF_* refusal is the cause. */
export function rejected(what: string, error: unknown): Error {
  if (error instanceof WorkflowTestError) return error;
  if (!isAnnalError(error) || !error.code.startsWith("WF_")) return error as Error;
  return new WorkflowTestError(
    "WF_TEST_MUTATION_REJECTED",
    `${what} was refused: ${error.code}: ${error.message}`,
    { cause: error },
  );
}
