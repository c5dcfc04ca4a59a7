/**
 * The workflow engine: definitions deployed by their bundle's hash, instances as streams of
 * the event log, resumed by replaying their code with the recorded outcomes. See
 * `docs/workflows.md`.
 */
export { defineWorkflow, isWorkflowDefinition } from "./define.ts";
export type {
  BusinessUntil,
  DialogAnswer,
  DialogOptions,
  Escalation,
  EscalationAssignees,
  EscalationLevel,
  Flow,
  RequestOptions,
  RetryPolicy,
  StepContext,
  StepOptions,
  Until,
  WorkflowAccess,
  WorkflowDefinition,
  WorkflowOptions,
} from "./define.ts";
export { bind } from "./bindings.ts";
export { ESCALATION_ACTOR, managerOf } from "./escalation.ts";
export type {
  BindingContext,
  BindingDeclaration,
  BindingSources,
  RequestSender,
  RestBackendSettings,
  RestService,
  ServicesOf,
  StepCause,
  WorkflowDirectory,
} from "./bindings.ts";
export {
  AssertionError,
  ChildFailedError,
  NonRetryableError,
  ReplayMismatchError,
  StepFailedError,
  TimeoutError,
  ValidationError,
  WorkflowRefusal,
} from "./errors.ts";
export type { Actor } from "./access.ts";
export type { ActorRef } from "../events/index.ts";
export {
  OPERATOR,
  actorRef,
  isAssignee,
  maySeeDefinition,
  maySeeInstance,
  seesAll,
} from "./access.ts";
export { deadline } from "./time.ts";
export { deployDefinitions, prepareDefinitions, type PreparedDefinition } from "./deploy.ts";
export { Definitions, definitionOf, type DeployedDefinition } from "./definitions.ts";
export { bundleDefinition, bundleOptions, firstBuildError, loadBundle } from "./bundle.ts";
export {
  advanceInstance,
  instanceEvents,
  loadInstance,
  type AdvanceResult,
  type EngineDeps,
} from "./advance.ts";
export {
  answerRequest,
  cancelInstance,
  completeDialog,
  retryInstance,
  startWorkflow,
  startWorkflows,
  type StartOptions,
} from "./commands.ts";
export { startWorkflowEngine, type WorkflowEngine, type WorkflowEngineOptions } from "./engine.ts";
export { StickyRuns, type StickyStats } from "./sticky.ts";
export type { InstanceRun } from "./run.ts";
export { advanceDatabaseClock, fireDueTimers } from "./timers.ts";
export { WAKE_QUEUE } from "./commit.ts";
export { databaseClock } from "./lock.ts";
export { dialogIdOf } from "./call-records.ts";
export {
  foldInstance,
  type CallRecord,
  type InstanceEvent,
  type InstanceState,
  type InstanceStatus,
} from "../../projections/workflows/index.ts";
export {
  childrenOf,
  definitionInventory,
  type DefinitionVersion,
  inboxOf,
  instanceAt,
  type InboxRow,
  listInstances,
  type InstanceFilter,
} from "./queries.ts";
export { workflowsForChangeEvent } from "./change-events.ts";
export {
  assigneeKeysAt,
  delegationState,
  delegationsInForce,
  delegationsInForceNow,
  endDelegation,
  grantDelegation,
  readDelegations,
  type Delegation,
  type DelegationState,
} from "./delegation/index.ts";
export {
  WorkflowReader,
  type ActorView,
  type CatalogEntryView,
  type DeadlineView,
  type DialogView,
  type ErrorView,
  type InstanceEventView,
  type InstanceView,
  type Moment,
  type StepView,
} from "./read/index.ts";
