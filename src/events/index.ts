/**
 * The event vocabulary: every event type annal records and its data, typed as one union
 * (`AnnalEventMap`). Producers build events with `annalEvent`; projections receive them
 * narrowed by type (`RecordedAnnalEvent`).
 */
export {
  annalEvent,
  asEventOf,
  eventsOfTypes,
  type AnnalEvent,
  type AnnalEventMap,
  type AnnalEventType,
  type RecordedAnnalEvent,
  type RecordedOf,
} from "./vocabulary.ts";
export {
  ENTRY_CHANGE_TYPES,
  ENTRY_EVENT,
  ENTRY_EVENT_TYPES,
  changeTypeOf,
  entryStream,
  stateAfterEvent,
  type AttributeMap,
  type ChangeType,
  type EntryChange,
  type EntryChangeType,
  type EntryEventType,
  type EntrySnapshot,
  type EntryState,
} from "./entry.ts";
export {
  ERASED_VALUE,
  CHECKPOINT_EVENT_TYPES,
  ERASURE_STREAM,
  RETENTION_STREAM,
  type ChainHeadRef,
  type EntryErased,
  type LogRetained,
  type ReplacedEvents,
  type StreamCheckpointed,
  type WorkflowCheckpointed,
} from "./retention.ts";
export {
  NameSet,
  applyChanges,
  largeArrayPatch,
  patchBetween,
  sameAttributes,
  sortAttributes,
  touchedAttributes,
  type AttributeChange,
} from "./entry-state.ts";
export {
  CAPTURE_FAILURES_STREAM,
  CHANGE_NOT_RECORDED,
  type DirectoryChangeNotRecorded,
} from "./capture.ts";
export {
  CHANGE_EVENT,
  type ChangeEventAbandoned,
  type ChangeEventEnvelope,
  type ChangeEventFailed,
  type ChangeEventProcessed,
  type ChangeEventReceived,
  type ChangeEventRef,
  type ChangeEventRetryRequested,
  type DirectoryWrite,
  type ProcessingError,
} from "./change-event.ts";
export { DIRECTORY_WRITE_REQUESTED, type DirectoryWriteRequested } from "./directory-write.ts";
export {
  ACCESS_CONFIGURATION_EVENT,
  ACCESS_CONFIGURATION_STREAM,
  ACCOUNT_EVENT,
  accountStream,
  SERVICE_ACCOUNT_EVENT,
  serviceAccountStream,
  type AccessConfigurationActivated,
  type AccessConfigurationDeactivated,
  type AccessGrants,
  type PersonAccountCreated,
  type PersonAccountUpdated,
  type PrincipalLimitExceeded,
  type PrincipalsRefreshed,
  type SessionEnded,
  type SessionStarted,
  type ServiceAccountAccessChanged,
  type ServiceAccountRevoked,
  type ServiceAccountTokenIssued,
} from "./accounts.ts";
export {
  INSTANCE_EVENT_TYPES,
  definitionStream,
  workflowStream,
  type ActorRef,
  type ChildCompleted,
  type ChildStarted,
  type DeadlinePassed,
  type DefinitionRef,
  type DialogCompleted,
  type DialogEscalated,
  type DialogEscalationPlan,
  type DialogOpened,
  type FlowValueRecorded,
  type InstanceEventType,
  type RecordedError,
  type RequestAnswered,
  type RequestSent,
  type StepCompleted,
  type StepFailed,
  type StepScheduled,
  type WorkflowCancelled,
  type WorkflowCompleted,
  type WorkflowDefinitionDeployed,
  type WorkflowErrored,
  type WorkflowRetried,
  type WorkflowStarted,
} from "./workflow.ts";
export {
  DELEGATION_EVENT_TYPES,
  delegationStream,
  type DelegationEnded,
  type DelegationGranted,
} from "./delegation.ts";
export { MAIL_SENT, mailStream, type MailSent } from "./mail.ts";
export {
  REVIEW_EVENT_TYPES,
  REVIEW_ITEM_WORKFLOW,
  reviewCampaignStream,
  type ReviewCampaignStarted,
  type ReviewItem,
  type ReviewItemsListed,
} from "./review.ts";
