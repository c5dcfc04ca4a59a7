import type { ActorRef } from "../events/index.ts";
import type { SchemaOutput, StandardSchemaV1 } from "../schema/index.ts";
import type { BindingDeclaration, ServicesOf } from "./bindings.ts";

/**
 * A duration (`"30s"`, `"3d"`, `"1d12h"`, or milliseconds), business time (`"3bd"`, `"4bh"`,
 * or `{ businessDays: 3, calendar: "de-be" }`, counted in a configured `[[calendars]]`), or a
 * moment (a Date, an ISO 8601 date-time).
 */
export type Until = string | number | Date | BusinessUntil;

/** Business days or hours in a configured calendar (the default one without `calendar`). */
export type BusinessUntil = (
  | { readonly businessDays: number; readonly businessHours?: number }
  | { readonly businessHours: number; readonly businessDays?: number }
) & { readonly calendar?: string };

export interface RetryPolicy {
  /** Attempts in all, the first included. Default 5. */
  readonly maxAttempts?: number;
  /** Wait before the second attempt; doubled for each after it. Default `"1s"`. */
  readonly initialDelay?: string | number;
  /** The longest wait between attempts. Default `"5m"`. */
  readonly maxDelay?: string | number;
}

/** What a step's function is given. */
export interface StepContext<S> {
  /** The definition's bindings (or, in a test, their fixtures). */
  readonly bindings: S;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly instanceId: string;
  /** Aborted when the step's `timeout` passes. */
  readonly signal: AbortSignal;
}

export interface StepOptions<T> {
  readonly retry?: RetryPolicy;
  /** The result must match it; a result that does not is `WF_VALIDATION`, not retried. */
  readonly schema?: StandardSchemaV1<unknown, T>;
  /** How long one attempt may take. Default `"5m"`. */
  readonly timeout?: string | number;
  /**
   * The account the step acts for (an approver): its directory writes are made as them
   * (proxied authorization), and the captured change names them.
   */
  readonly as?: ActorRef;
}

export interface DialogOptions<S extends StandardSchemaV1> {
  /** What is asked, e.g. `"approve"`: its name in the inbox. */
  readonly name: string;
  /** Who may answer: account ids, or principals (group DNs). */
  readonly assignees: readonly string[];
  /** The answer must match it (its JSON Schema makes the form). */
  readonly schema: S;
  readonly until?: Until;
  /** Shown with the dialog: what the assignee decides about. */
  readonly data?: unknown;
  /**
   * Who else is asked, and when, while nobody answers: each level after a duration or business
   * time from the previous one (the first from the opening), and at the end a final outcome.
   */
  readonly escalation?: Escalation;
}

/**
 * Who is asked from a level of an escalation on: principals (account ids, group DNs), or a
 * function read at that moment with the definition's bindings (`managerOf(dn)`: the manager
 * the directory names then). Its result is recorded; a replay does not call it again.
 */
export type EscalationAssignees =
  | readonly string[]
  | ((context: {
      readonly bindings: Readonly<Record<string, unknown>>;
    }) => readonly string[] | Promise<readonly string[]>);

/** After how long: a duration or business time (`"2d"`, `"3bd"`, `{ businessDays: 2 }`). */
export type EscalationAfter = string | number | BusinessUntil;

export interface EscalationLevel {
  readonly after: EscalationAfter;
  readonly assignees: EscalationAssignees;
  /** `"reassign"` (the default): only these may answer from then on; `"add"`: these too. */
  readonly mode?: "reassign" | "add";
}

export interface Escalation {
  readonly levels: readonly EscalationLevel[];
  /**
   * The end of the chain, after `after` from the last level (it is the dialog's deadline, and
   * `until` still caps it): the dialog ends with `answer` as its answer, given by the
   * escalation chain (`by.accountId` "escalation"), or without one, with TimeoutError.
   */
  readonly final?: { readonly after: EscalationAfter; readonly answer?: unknown };
}

/** A dialog's answer, and who gave it. */
export interface DialogAnswer<T> {
  readonly answer: T;
  readonly by: ActorRef;
  /** The assignee `by` answered for through a delegation; null when `by` is an assignee. */
  readonly for: ActorRef | null;
}

export interface RequestOptions<S extends StandardSchemaV1> {
  readonly until?: Until;
  /** The answer must match it. */
  readonly schema?: S;
  /** Sending is a step: its retry policy. */
  readonly retry?: RetryPolicy;
}

/**
 * What workflow code calls. Each call is recorded in the instance's log; when the instance is
 * resumed the code runs again from the start and each call returns what it returned the first
 * time, so the code between calls must be deterministic: take time, ids and randomness from
 * `now`, `uuid` and `random`, never from `Date`, `crypto` or `Math.random`.
 */
export interface Flow<S = Record<string, unknown>> {
  readonly instanceId: string;
  /**
   * The account that started the instance (a child's: its parent's), as its start recorded
   * it: who asks, in a request of their own. A change event's start names its hook, with no DN.
   */
  readonly startedBy: ActorRef;
  /** Runs `fn` once (retried on failure by `retry`) and records its result. */
  step<T>(
    name: string,
    fn: (context: StepContext<S>) => T | Promise<T>,
    options?: StepOptions<T>,
  ): Promise<T>;
  /** Waits for an assignee's answer (`completeDialog`); throws TimeoutError after `until`. */
  dialog<D extends StandardSchemaV1>(
    options: DialogOptions<D>,
  ): Promise<DialogAnswer<SchemaOutput<D>>>;
  /**
   * Sends `payload` through the binding `binding` (its `send(payload, { key })`) and waits for
   * an answer correlated by that key (a change event, through `context.workflows`).
   */
  request<D extends StandardSchemaV1 = StandardSchemaV1>(
    binding: keyof S & string,
    payload: unknown,
    options?: RequestOptions<D>,
  ): Promise<SchemaOutput<D>>;
  /** Starts a child instance and waits for its result. */
  start<R = unknown>(
    definition: string,
    version: number,
    parameters: unknown,
    options?: { readonly until?: Until },
  ): Promise<R>;
  /** The database's clock, recorded. */
  now(): Date;
  /** A random uuid, recorded. */
  uuid(): string;
  /** A random number in [0, 1), recorded. */
  random(): number;
  /** Throws AssertionError (`WF_ASSERTION`) unless `condition` holds. */
  assert(condition: unknown, message: string): asserts condition;
}

export interface WorkflowAccess {
  /**
   * The access functions an account needs to see this definition and start it (any one of
   * them). Empty (the default): every signed-in account.
   */
  readonly start?: readonly string[];
}

export interface WorkflowOptions<
  P extends StandardSchemaV1,
  B extends Readonly<Record<string, BindingDeclaration>>,
  R,
> {
  /** Letters, digits, `.`, `_` and `-`. */
  readonly name: string;
  /** A whole number; raise it for every change of the code. */
  readonly version: number;
  readonly parameters: P;
  readonly bindings?: B;
  /** The instance's deadline; passing it ends the instance ERRORED with `WF_TIMEOUT`. */
  readonly until?: Until;
  readonly access?: WorkflowAccess;
  /** A title for people (the catalog, the inbox). Default: the name. */
  readonly title?: string;
  run(flow: Flow<ServicesOf<B>>, parameters: SchemaOutput<P>): Promise<R>;
}

/** A definition as `defineWorkflow` returns it, and as a definition file's default export. */
export interface WorkflowDefinition<
  P extends StandardSchemaV1 = StandardSchemaV1,
  B extends Readonly<Record<string, BindingDeclaration>> = Readonly<
    Record<string, BindingDeclaration>
  >,
  R = unknown,
> extends WorkflowOptions<P, B, R> {
  readonly [DEFINITION]: true;
  readonly bindings: B;
  readonly access: Required<WorkflowAccess>;
}

const DEFINITION = Symbol.for("annal.workflow.definition");

const NAME = /^[A-Za-z][A-Za-z0-9._-]{0,99}$/;

/**
 * A workflow definition: the default export of a file in `[workflows] dir`. annal bundles the
 * file at start-up and deploys it by the bundle's SHA-256 under its name and version.
 *
 * @example
 * import { defineWorkflow, bind } from "annal";
 * import { z } from "zod";
 *
 * export default defineWorkflow({
 *   name: "access-request",
 *   version: 1,
 *   parameters: z.object({ group: z.string(), reason: z.string() }),
 *   bindings: { directory: bind.directory() },
 *   async run(flow, { group, reason }) {
 *     const { answer, by } = await flow.dialog({
 *       name: "approve", assignees: [group], until: "3d", data: { reason },
 *       schema: z.object({ approved: z.boolean() }),
 *     });
 *     if (answer.approved) await flow.step("add member", ({ bindings }) => ..., { as: by });
 *     return { approved: answer.approved };
 *   },
 * });
 */
export function defineWorkflow<
  P extends StandardSchemaV1,
  B extends Readonly<Record<string, BindingDeclaration>> = Readonly<Record<string, never>>,
  R = unknown,
>(options: WorkflowOptions<P, B, R>): WorkflowDefinition<P, B, R> {
  return {
    ...options,
    bindings: options.bindings ?? ({} as B),
    access: { start: options.access?.start ?? [] },
    [DEFINITION]: true,
  };
}

/** Whether `value` was made by `defineWorkflow` (of any copy of annal's module). */
export function isWorkflowDefinition(value: unknown): value is WorkflowDefinition {
  return typeof value === "object" && value !== null && DEFINITION in value;
}

/** Why a definition's options cannot be used, or undefined. */
export function definitionProblem(definition: WorkflowDefinition): string | undefined {
  if (typeof definition.name !== "string" || !NAME.test(definition.name)) {
    return `name ${JSON.stringify(definition.name)} must be a letter, then letters, digits, '.', '_' or '-'`;
  }
  if (!Number.isSafeInteger(definition.version) || definition.version < 1) {
    return `version ${JSON.stringify(definition.version)} must be a whole number from 1`;
  }
  if (typeof definition.run !== "function") return "run must be a function";
  if (typeof definition.parameters?.["~standard"]?.validate !== "function") {
    return "parameters must be a schema (zod, valibot, arktype: any Standard Schema)";
  }
  // What else deploy can see of the options (those of flow calls exist only when run runs,
  // and are checked where first read: checkEscalation).
  const { until, title, access, bindings } = definition as {
    until?: unknown;
    title?: unknown;
    access?: { start?: unknown };
    bindings?: unknown;
  };
  if (
    until !== undefined &&
    typeof until !== "string" &&
    !(typeof until === "number" && Number.isFinite(until)) &&
    !(until instanceof Date) &&
    !(
      typeof until === "object" &&
      until !== null &&
      ("businessDays" in until || "businessHours" in until)
    )
  ) {
    return `until must be a duration, a moment or business time ("3d", "2027-01-31T00:00:00Z", { businessDays: 3 }), not ${Array.isArray(until) ? "a list" : JSON.stringify(until)}`;
  }
  if (title !== undefined && typeof title !== "string") return "title must be a text";
  const start = access?.start;
  if (!Array.isArray(start) || start.some((each) => typeof each !== "string" || each === "")) {
    return 'access.start must be a list of access functions (access: { start: ["operator"] })';
  }
  if (typeof bindings !== "object" || bindings === null || Array.isArray(bindings)) {
    return "bindings must be an object of bind.directory(), bind.rest(name) or bind.service(create), by name";
  }
  for (const [name, binding] of Object.entries(bindings)) {
    const kind = (binding as { kind?: unknown } | null)?.kind;
    if (kind !== "directory" && kind !== "rest" && kind !== "service") {
      return `bindings.${name} must be made by bind.directory(), bind.rest(name) or bind.service(create)`;
    }
  }
  return undefined;
}
