/**
 * The change-event webhook: hooks files (`defineHooks`, `http.webhook`), their loading, the
 * signed ingress (`hooksPlugin`), processing by the providers (`startHookWorkers`) and failed
 * work. See README.md in this folder.
 */
export { defineHooks, http, isHooks } from "./definition/define.ts";
export {
  ChangeEventConflictError,
  FailedWorkNotFoundError,
  FailedWorkResolvedError,
  FailedWorkUnavailableError,
  HooksDirectoryNotFoundError,
  HooksInvalidError,
  HooksSecretMissingError,
  isPermanentFailure,
  PermanentFailure,
  WEBHOOK_ANSWERS,
  WebhookRefusal,
  type WebhookAnswer,
} from "./errors.ts";
export {
  CHANGE_EVENT,
  type ChangeEventAbandoned,
  type ChangeEventFailed,
  type ChangeEventProcessed,
  type ChangeEventReceived,
  type ChangeEventRef,
  type ChangeEventRetryRequested,
  type ProcessingError,
} from "../events/index.ts";
export { changeEventKey, sourceStream } from "./ingress/envelope.ts";
export { loadHooks, type LoadHooksOptions } from "./definition/load.ts";
export {
  HooksRegistry,
  resolveHooks,
  type ResolvedHooks,
  type ResolvedWebhook,
  type ResolveOptions,
} from "./definition/registry.ts";
export { signDelivery, STANDARD_HEADERS, verifyDelivery } from "./definition/signature.ts";
export {
  hooksPlugin,
  INGRESS_STEPS_TIMEOUT_MS,
  type HooksPluginOptions,
} from "./ingress/plugin.ts";
export { startHookWorkers, type HookWorkerOptions, type HookWorkers } from "./processing/worker.ts";
export type { DirectoryAccess } from "./processing/context.ts";
export { CHANGE_EVENTS_QUEUE } from "./processing/queue.ts";
export { changeEventState, type ChangeEventState } from "./processing/state.ts";
export {
  FAILED_WORK_STATES,
  getFailedWork,
  listFailedWork,
  retryFailedWork,
  type FailedWork,
  type FailedWorkState,
  type ListFailedWorkOptions,
  type RetryResult,
} from "./failed-work/failed-work.ts";
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
} from "./definition/types.ts";
