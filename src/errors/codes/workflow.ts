import type { ErrorCodeSpec } from "./spec.ts";

/**
 * The workflow engine (spec 3): the SDK's error classes, recorded on a failed step or
 * instance and throwable from workflow code; the refusals of commands, which GraphQL answers
 * with the code itself in `extensions.code`; and start-up's.
 */
export const WORKFLOW_CODES = {
  WF_NON_RETRYABLE: {
    status: 422,
    meaning: "A step threw a permanent failure (NonRetryableError); it is not retried.",
    graphql: "WF_NON_RETRYABLE",
  },
  WF_VALIDATION: {
    status: 400,
    meaning:
      "A value failed its schema (start parameters, a step's result, a dialog's or request's answer); not retried.",
    graphql: "WF_VALIDATION",
  },
  WF_TIMEOUT: {
    status: 504,
    meaning:
      "A dialog, request, child workflow, step or the instance passed its `until` deadline; not retried.",
    graphql: "WF_TIMEOUT",
  },
  WF_ASSERTION: {
    status: 422,
    meaning: "`flow.assert(condition, message)` got a falsy condition; not retried.",
    graphql: "WF_ASSERTION",
  },
  WF_STEP_FAILED: {
    status: 502,
    meaning: "A step failed on every attempt its retry policy allows; the last error is its cause.",
    graphql: "WF_STEP_FAILED",
  },
  WF_STEP_TIMEOUT: {
    status: 504,
    meaning: "One attempt of a step ran longer than its `timeout`; it is retried like any failure.",
    graphql: "WF_STEP_TIMEOUT",
  },
  WF_UNCAUGHT_ERROR: {
    status: 500,
    meaning:
      "The workflow's code threw an error that is none of the SDK's; the instance is ERRORED.",
    graphql: "WF_UNCAUGHT_ERROR",
  },
  WF_REPLAY_MISMATCH: {
    status: 500,
    meaning:
      "The code no longer makes the calls its recorded history has (another call at a position): the instance is ERRORED rather than sent down another branch.",
    hint: "the code of a deployed version must not change; deploy the change as a new version",
    graphql: "WF_REPLAY_MISMATCH",
  },
  WF_CHILD_FAILED: {
    status: 502,
    meaning: "A child workflow ended without a result (cancelled).",
    graphql: "WF_CHILD_FAILED",
  },
  ANNAL_WORKFLOWS_UNAVAILABLE: {
    status: 503,
    meaning: "The action needs the workflow engine, and this gateway was built without one.",
    hint: "start annal with its API (annal start), which runs the engine's commands",
  },
  WF_NOT_FOUND: {
    status: 404,
    meaning:
      "The workflow, instance or dialog does not exist, or the account may not discover it (the two look the same).",
    graphql: "WF_NOT_FOUND",
  },
  WF_FORBIDDEN: {
    status: 403,
    meaning:
      "The account may see the resource but may not do the action (it needs an access function such as operator, or to be an assignee).",
    graphql: "WF_FORBIDDEN",
  },
  WF_CONFLICT: {
    status: 409,
    meaning: "The action is allowed but the resource is no longer in the state it needs.",
    graphql: "WF_CONFLICT",
  },
  WF_LOCKED: {
    status: 423,
    meaning: "Another command or engine holds the instance's lock; retry after a short wait.",
    hint: "retry in a moment",
    graphql: "WF_LOCKED",
  },
  WF_DEFINITION_BUNDLE_CHANGED: {
    status: 500,
    meaning:
      "A definition's bundle changed while its name and version are already deployed with another bundle; the message names the definition, the version and both hashes.",
    hint: "raise the definition's version",
    surfaces: ["startup"],
  },
  WF_DEFINITION_INVALID: {
    status: 500,
    meaning:
      "A file in `[workflows] dir` does not bundle, or does not export a definition made with defineWorkflow.",
    surfaces: ["startup"],
  },
  WF_OPTIONS_INVALID: {
    status: 500,
    meaning:
      "The workflow's code called `flow` with options of the wrong shape (`flow.dialog`'s `escalation` a list instead of `{ levels }`, `assignees` one text instead of a list); the message names the option and the shape it takes. Not retried: deploy the definition fixed, as a new version.",
    graphql: "WF_OPTIONS_INVALID",
  },
  WF_BINDING_MISSING: {
    status: 500,
    meaning:
      "A step or request names a binding its definition does not declare, or none was provided.",
    graphql: "WF_BINDING_MISSING",
  },
} as const satisfies Record<string, ErrorCodeSpec>;

/** The workflow test driver (`annal/testing`): every failure is a WorkflowTestError with one. */
export const WORKFLOW_TEST_CODES = {
  WF_TEST_WAIT_TIMEOUT: {
    status: 500,
    meaning:
      "`waitFor` did not see the expected state within its timeout; the message says the state it saw.",
    hint: "raise the timeout if the workflow sleeps or retries, or advance the clock",
  },
  WF_TEST_MUTATION_REJECTED: {
    status: 500,
    meaning:
      "`start` or `completeActivity` was refused (not an assignee, invalid parameters, ...); the refusal's own WF_* code is its cause.",
  },
  WF_TEST_BINDING_FIXTURE_MISSING: {
    status: 500,
    meaning: "A binding has no fixture; the message names it.",
    hint: "register one with fixture(binding, value) before start()",
  },
  WF_TEST_UNSUPPORTED_CALL: {
    status: 500,
    meaning:
      "The workflow made a call the test cannot serve: `flow.request` through a fixture without `send`, or `flow.start` of a definition and version not registered.",
    hint: "register the child definition in workflows with the version the parent asks for, or give the request's fixture a send(payload, { key }) method",
  },
  WF_TEST_CHILD_DEFINITION_MISMATCH: {
    status: 500,
    meaning: "`toHaveChild` got a definition that is not registered or not a started child.",
  },
  WF_TEST_INSTANCE_ERRORED: {
    status: 500,
    meaning: "The instance ended ERRORED while the test waited; its error is the cause.",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
