/**
 * annal as a package: what user code written against annal imports. Hooks files:
 *
 * ```ts
 * import { defineHooks, http, PermanentFailure } from "annal";
 * ```
 */
export { defineHooks, http, PermanentFailure } from "./hooks/index.ts";
export type {
  ChangeEventEnvelope,
  ChangeEventInput,
  ChangeEventProvider,
  DirectoryWrite,
  Duration,
  HookDirectory,
  HookWorkflows,
  Hooks,
  HooksOptions,
  MapResult,
  ProviderContext,
  RateLimitOptions,
  RetryOptions,
  SignatureHeaders,
  SignatureOptions,
  StandardSchemaV1,
  Webhook,
  WebhookLimits,
  WebhookOptions,
} from "./hooks/index.ts";

/**
 * Workflow definitions, the default export of each file in `[workflows] dir`:
 *
 * ```ts
 * import { defineWorkflow, bind, NonRetryableError } from "annal";
 * ```
 */
export {
  AssertionError,
  bind,
  ChildFailedError,
  defineWorkflow,
  NonRetryableError,
  StepFailedError,
  TimeoutError,
  ValidationError,
} from "./workflow/index.ts";
export type {
  ActorRef,
  BindingContext,
  BindingDeclaration,
  DialogAnswer,
  DialogOptions,
  Flow,
  RequestOptions,
  RequestSender,
  RestService,
  RetryPolicy,
  StepContext,
  StepOptions,
  Until,
  WorkflowDefinition,
  WorkflowDirectory,
} from "./workflow/index.ts";
