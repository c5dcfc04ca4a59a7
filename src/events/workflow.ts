/**
 * The events of the workflow engine. A definition's deployment is on the stream
 * `workflow-definition-<name>@<version>`; everything that happens to an instance is on its own
 * stream, `workflow-<instanceId>`, in the order it happened. Replaying an instance's stream
 * through `run` is how the engine resumes it; the projections read the same events.
 *
 * Each call the run function makes on `flow` has a sequence number (`seq`, from 1, in call
 * order): a replay meets the calls in the same order and takes their recorded outcomes.
 */

/** The streams of the engine. */
export const workflowStream = (instanceId: string) => `workflow-${instanceId}`;
export const definitionStream = (name: string, version: number) =>
  `workflow-definition-${name}@${version}`;

/** Every event type of an instance's stream. */
export const INSTANCE_EVENT_TYPES = [
  "WorkflowStarted",
  "StepScheduled",
  "StepCompleted",
  "StepFailed",
  "FlowValueRecorded",
  "DialogOpened",
  "DialogEscalated",
  "DialogCompleted",
  "RequestSent",
  "RequestAnswered",
  "ChildStarted",
  "ChildCompleted",
  "DeadlinePassed",
  "WorkflowCompleted",
  "WorkflowErrored",
  "WorkflowCancelled",
  "WorkflowRetried",
  "WorkflowCheckpointed",
] as const;
export type InstanceEventType = (typeof INSTANCE_EVENT_TYPES)[number];

/** Who acted: the account a command was made by (and the DN it writes as, when it has one). */
export interface ActorRef {
  readonly accountId: string;
  readonly name: string;
  readonly dn: string | null;
}

/** A definition as an instance runs it. */
export interface DefinitionRef {
  readonly name: string;
  readonly version: number;
  /** SHA-256 of the bundle, hex. */
  readonly hash: string;
}

/** An error as the log keeps it: its code, its message and the class it was thrown as. */
export interface RecordedError {
  readonly code: string;
  readonly message: string;
  /** `NonRetryableError`, `ValidationError`, `TimeoutError`, `AssertionError`, or `Error`. */
  readonly name: string;
}

export interface WorkflowDefinitionDeployed extends DefinitionRef {
  /** The definition file it was bundled from, relative to `[workflows] dir`. */
  readonly file: string;
  readonly bytes: number;
}

export interface WorkflowStarted {
  readonly instanceId: string;
  readonly definition: DefinitionRef;
  readonly parameters: unknown;
  readonly startedBy: ActorRef;
  /** The instance's deadline (ISO 8601), or null for none. */
  readonly until: string | null;
  /** Set for a child: the parent and the call that started it. */
  readonly parent: { readonly instanceId: string; readonly seq: number } | null;
  /** The key that makes a start idempotent (a change event's), when given. */
  readonly startKey: string | null;
}

/**
 * A step's attempt is about to run (attempt 1), or to run again (a retry, attempt > 1).
 *
 * One event a step: when the call before completed a step and nothing else was recorded
 * since, that completion rides along (`completed`) instead of being a `StepCompleted` of its
 * own. Logs written before carry it as a `StepCompleted` (and `actingFor: null`): both read
 * the same.
 */
export interface StepScheduled {
  /** The instance and its definition's name: what a directory change it causes names. */
  readonly instanceId: string;
  readonly workflow: string;
  readonly seq: number;
  readonly name: string;
  readonly attempt: number;
  /** The account the step acts for (`{ as }`): its directory writes are made as them. Absent: none. */
  readonly actingFor?: ActorRef | null;
  /** The step (its call's `seq`) that completed just before, and its result: a `StepCompleted`'s. */
  readonly completed?: StepCompletion;
}

/** A step's completion carried by the next `StepScheduled` (see there). */
export interface StepCompletion {
  readonly seq: number;
  /** The step's result; absent: null (a step that returned nothing). */
  readonly result?: unknown;
}

export interface StepCompleted {
  readonly seq: number;
  readonly name: string;
  readonly attempt: number;
  readonly result: unknown;
}

export interface StepFailed {
  readonly seq: number;
  readonly name: string;
  readonly attempt: number;
  readonly error: RecordedError;
  /** When the next attempt runs (ISO 8601, the database's clock); null: no attempt is left. */
  readonly retryAt: string | null;
}

/** `flow.now()`, `flow.uuid()`, `flow.random()`: a value the code must see again on replay. */
export interface FlowValueRecorded {
  readonly seq: number;
  readonly kind: "now" | "uuid" | "random";
  readonly value: string | number;
}

export interface DialogOpened {
  readonly seq: number;
  readonly dialogId: string;
  readonly name: string;
  /** Account ids and principals (group DNs) that may answer. */
  readonly assignees: readonly string[];
  /** The answer's JSON Schema, for forms; null when the schema cannot say. */
  readonly form: unknown;
  readonly data: unknown;
  readonly until: string | null;
  /** Its escalation chain, the moments computed when it opened (absent: none). */
  readonly escalation?: DialogEscalationPlan;
}

export interface DialogEscalationPlan {
  /** Each level's moment (ISO 8601) and whether it replaces or adds assignees. */
  readonly levels: readonly { readonly at: string; readonly mode: "reassign" | "add" }[];
  /** The answer the chain gives at its end (`until`); absent: the dialog times out. */
  readonly finalAnswer?: unknown;
}

/** A level of a dialog's escalation chain was reached: from now on `assignees` may answer. */
export interface DialogEscalated {
  readonly seq: number;
  readonly dialogId: string;
  /** The level reached, from 0. */
  readonly level: number;
  /** Everyone who may answer from now on. */
  readonly assignees: readonly string[];
  /** Why the level's assignees could not be read (the assignees stay as they were). */
  readonly error?: RecordedError;
}

export interface DialogCompleted {
  readonly seq: number;
  readonly dialogId: string;
  readonly answer: unknown;
  readonly by: ActorRef;
  /**
   * The assignee `by` answered for through a delegation (see `DelegationGranted`); absent or
   * null when `by` answered as an assignee.
   */
  readonly for?: ActorRef | null;
}

export interface RequestSent {
  readonly seq: number;
  /** The binding it went through. */
  readonly name: string;
  /** What an answer names to be correlated with this request. */
  readonly key: string;
  readonly until: string | null;
}

export interface RequestAnswered {
  readonly seq: number;
  readonly key: string;
  readonly answer: unknown;
  /** Who answered: the account, or the change event's source. */
  readonly by: ActorRef | null;
  readonly source: string | null;
}

export interface ChildStarted {
  readonly seq: number;
  readonly childId: string;
  readonly definition: { readonly name: string; readonly version: number };
  readonly until: string | null;
}

export interface ChildCompleted {
  readonly seq: number;
  readonly childId: string;
  readonly state: "COMPLETED" | "ERRORED" | "CANCELLED";
  readonly result: unknown;
  readonly error: RecordedError | null;
}

/** A deadline passed: of the call `seq`, or of the instance itself (`seq` null). */
export interface DeadlinePassed {
  readonly seq: number | null;
  readonly until: string;
}

export interface WorkflowCompleted {
  readonly result: unknown;
}

export interface WorkflowErrored {
  readonly error: RecordedError;
  /** The call it failed at, when it failed at one. */
  readonly seq: number | null;
}

export interface WorkflowCancelled {
  readonly by: ActorRef | null;
  readonly reason: string;
}

/** An ERRORED instance was asked to run again: the call it failed at is tried anew. */
export interface WorkflowRetried {
  readonly by: ActorRef;
}
