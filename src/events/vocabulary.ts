import type { NewEvent, RecordedEvent } from "../store/index.ts";
import type {
  AccessConfigurationActivated,
  AccessConfigurationDeactivated,
  PersonAccountCreated,
  PersonAccountUpdated,
  PrincipalLimitExceeded,
  PrincipalsRefreshed,
  ServiceAccountAccessChanged,
  ServiceAccountRevoked,
  ServiceAccountTokenIssued,
  SessionEnded,
  SessionStarted,
} from "./accounts.ts";
import type { DirectoryChangeNotRecorded } from "./capture.ts";
import type {
  ChangeEventAbandoned,
  ChangeEventFailed,
  ChangeEventProcessed,
  ChangeEventReceived,
  ChangeEventRetryRequested,
} from "./change-event.ts";
import type { DelegationEnded, DelegationGranted } from "./delegation.ts";
import type { DirectoryWriteRequested } from "./directory-write.ts";
import type { EntryChange, EntrySnapshot } from "./entry.ts";
import type { MailSent } from "./mail.ts";
import type { ReviewCampaignStarted, ReviewItemsListed } from "./review.ts";
import type {
  EntryErased,
  LogRetained,
  StreamCheckpointed,
  WorkflowCheckpointed,
} from "./retention.ts";
import type {
  ChildCompleted,
  ChildStarted,
  DeadlinePassed,
  DialogCompleted,
  DialogEscalated,
  DialogOpened,
  FlowValueRecorded,
  RequestAnswered,
  RequestSent,
  StepCompleted,
  StepFailed,
  StepScheduled,
  WorkflowCancelled,
  WorkflowCompleted,
  WorkflowDefinitionDeployed,
  WorkflowErrored,
  WorkflowRetried,
  WorkflowStarted,
} from "./workflow.ts";

/**
 * Every event annal records, by type: the one list of what the log can hold. A projection
 * names the types it handles and receives them narrowed (`RecordedAnnalEvent<T>`), so it
 * reads `event.data` as its own type after a `switch (event.type)`, with no cast.
 */
export interface AnnalEventMap {
  // An entry's stream (`entry-<entryUUID>`): what capture records of the directory.
  readonly EntryAdded: EntryChange;
  readonly EntryModified: EntryChange;
  readonly EntryRenamed: EntryChange;
  readonly EntryDeleted: EntryChange;
  readonly EntrySnapshot: EntrySnapshot;
  readonly StreamCheckpointed: StreamCheckpointed;
  // Retention's runs (`log-retention`) and erasures (`erasures`).
  readonly LogRetained: LogRetained;
  readonly EntryErased: EntryErased;
  readonly DirectoryChangeNotRecorded: DirectoryChangeNotRecorded;
  // A source's stream (`source-<source>`): a change event's life.
  readonly ChangeEventReceived: ChangeEventReceived;
  readonly ChangeEventProcessed: ChangeEventProcessed;
  readonly ChangeEventFailed: ChangeEventFailed;
  readonly ChangeEventAbandoned: ChangeEventAbandoned;
  readonly ChangeEventRetryRequested: ChangeEventRetryRequested;
  // A GraphQL mutation's write, before it is made.
  readonly DirectoryWriteRequested: DirectoryWriteRequested;
  // A service account's stream.
  readonly ServiceAccountTokenIssued: ServiceAccountTokenIssued;
  readonly ServiceAccountRevoked: ServiceAccountRevoked;
  readonly ServiceAccountAccessChanged: ServiceAccountAccessChanged;
  // A person's account stream (`account-<id>`): the account, its principals, its sessions.
  readonly PersonAccountCreated: PersonAccountCreated;
  readonly PersonAccountUpdated: PersonAccountUpdated;
  readonly PrincipalsRefreshed: PrincipalsRefreshed;
  readonly PrincipalLimitExceeded: PrincipalLimitExceeded;
  readonly SessionStarted: SessionStarted;
  readonly SessionEnded: SessionEnded;
  // The Access Configuration's stream.
  readonly AccessConfigurationActivated: AccessConfigurationActivated;
  readonly AccessConfigurationDeactivated: AccessConfigurationDeactivated;
  // The workflow engine: a definition's deployment, and an instance's stream.
  readonly WorkflowDefinitionDeployed: WorkflowDefinitionDeployed;
  readonly WorkflowStarted: WorkflowStarted;
  readonly StepScheduled: StepScheduled;
  readonly StepCompleted: StepCompleted;
  readonly StepFailed: StepFailed;
  readonly FlowValueRecorded: FlowValueRecorded;
  readonly DialogOpened: DialogOpened;
  readonly DialogEscalated: DialogEscalated;
  readonly DialogCompleted: DialogCompleted;
  readonly RequestSent: RequestSent;
  readonly RequestAnswered: RequestAnswered;
  readonly ChildStarted: ChildStarted;
  readonly ChildCompleted: ChildCompleted;
  readonly DeadlinePassed: DeadlinePassed;
  readonly WorkflowCompleted: WorkflowCompleted;
  readonly WorkflowErrored: WorkflowErrored;
  readonly WorkflowCancelled: WorkflowCancelled;
  readonly WorkflowRetried: WorkflowRetried;
  readonly WorkflowCheckpointed: WorkflowCheckpointed;
  // A person's delegation of their dialogs (`delegation-<account id>`).
  readonly DelegationGranted: DelegationGranted;
  readonly DelegationEnded: DelegationEnded;
  // Mail a custom endpoint sent (`mail-<account id>`).
  readonly MailSent: MailSent;
  // An access review campaign (`review-campaign-<id>`): its start and its items.
  readonly ReviewCampaignStarted: ReviewCampaignStarted;
  readonly ReviewItemsListed: ReviewItemsListed;
}

export type AnnalEventType = keyof AnnalEventMap;

/** One event of the vocabulary as data: `{ type, data }`, discriminated by `type`. */
export type AnnalEvent<T extends AnnalEventType = AnnalEventType> = {
  [K in T]: { readonly type: K; readonly data: AnnalEventMap[K] };
}[T];

/** A recorded event of the vocabulary, discriminated by `type`. */
export type RecordedAnnalEvent<T extends AnnalEventType = AnnalEventType> = {
  [K in T]: Omit<RecordedEvent, "type" | "data"> & {
    readonly type: K;
    readonly data: AnnalEventMap[K];
  };
}[T];

/**
 * A recorded event of type `T`: narrowed by the vocabulary when `T` is one of its types, and
 * plain `RecordedEvent` data otherwise (a test's or a benchmark's own event types).
 */
export type RecordedOf<T extends string> = T extends AnnalEventType
  ? RecordedAnnalEvent<T>
  : Omit<RecordedEvent, "type"> & { readonly type: T };

/**
 * A new event of the vocabulary for `appendToStream`, its data checked against its type.
 *
 * @example
 * await store.appendToStream(entryStream(uuid), [
 *   annalEvent("EntrySnapshot", { entryUUID: uuid, reason: "import", state }),
 * ]);
 */
export function annalEvent<T extends AnnalEventType>(
  type: T,
  data: AnnalEventMap[T],
  options: Omit<NewEvent, "type" | "data"> = {},
): NewEvent<AnnalEventMap[T]> {
  return { ...options, type, data };
}

/**
 * The log's events of the given types, as the vocabulary types them. The store hands out
 * `RecordedEvent<unknown>`: this is the one place where a stored `type` is trusted to say
 * what its `data` is (every append of these types goes through `annalEvent` or a typed
 * producer).
 */
export function eventsOfTypes<T extends string>(
  events: readonly RecordedEvent[],
  types: ReadonlySet<string>,
): RecordedOf<T>[] {
  return events.filter((event) => types.has(event.type)) as unknown as RecordedOf<T>[];
}

/**
 * `event` as the vocabulary types it when its type is one of `types`, else undefined: for a
 * reader of one event (the last of a stream) that needs its data.
 */
export function asEventOf<T extends AnnalEventType>(
  event: RecordedEvent,
  types: readonly T[],
): RecordedAnnalEvent<T> | undefined {
  return (types as readonly string[]).includes(event.type)
    ? (event as unknown as RecordedAnnalEvent<T>)
    : undefined;
}
