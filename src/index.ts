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
  managerOf,
  NonRetryableError,
  StepFailedError,
  TimeoutError,
  ValidationError,
} from "./workflow/index.ts";
export type {
  ActorRef,
  BindingContext,
  BindingDeclaration,
  BusinessUntil,
  DialogAnswer,
  DialogOptions,
  Escalation,
  EscalationAssignees,
  EscalationLevel,
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

/**
 * The rules file (`[rules] file`), its custom endpoints under `/api`:
 *
 * ```ts
 * import { defineEndpoints, gql, publicRoute } from "annal";
 * ```
 */
export { defineEndpoints, gql, publicRoute } from "./endpoints/index.ts";
export type {
  EndpointBindings,
  Endpoints,
  EndpointsApp,
  EndpointsContext,
  EndpointsFactory,
  EndpointViewer,
  FetchEndpoints,
  MailMessage,
  Messaging,
  SendResult,
  Templating,
  TokenInfo,
} from "./endpoints/index.ts";
