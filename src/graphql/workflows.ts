import { momentArgument } from "./moments.ts";
import type { GraphQLFieldResolver, GraphQLSchema } from "graphql";
import { assertAccess, assertAuthority, principalLimitError } from "../auth/index.ts";
import type { Queryable } from "../db/index.ts";
import { parseDN } from "../directory/index.ts";
import { AnnalError } from "../errors/index.ts";
import { workflowStream, type ActorRef, type RecordedError } from "../events/index.ts";
import {
  changeFeed,
  entryUUIDForDn,
  UUID,
  type ChangeCause,
  type ChangeFilter,
  type ChangeRecord,
} from "../history/index.ts";
import { listFailedWork, FAILED_WORK_STATES, type FailedWorkState } from "../hooks/index.ts";
import type { LogPosition } from "../store/index.ts";
import {
  cancelInstance,
  childrenOf,
  completeDialog,
  databaseClock,
  definitionInventory,
  inboxOf,
  instanceAt,
  instanceEvents,
  listInstances,
  loadInstance,
  maySeeDefinition,
  maySeeInstance,
  retryInstance,
  startWorkflow,
  WorkflowRefusal,
  type Actor,
  type CallRecord,
  type EngineDeps,
  type InstanceState,
  type InstanceStatus,
} from "../workflow/index.ts";
import { jsonSchemaOf } from "../schema/index.ts";
import { decodeKeyCursor, encodeKeyCursor, firstOf } from "./connection.ts";
import type { GatewayContext, Viewer } from "./context.ts";
import { BadUserInputError } from "./errors.ts";

/**
 * The workflow operations of `schema/workflows.graphql`: the catalog, instances (now and at a
 * moment), the inbox, the change feed and failed work, and the four commands. Every refusal
 * is the engine's own `WorkflowRefusal` (`WF_NOT_FOUND`, `WF_FORBIDDEN`, `WF_CONFLICT`,
 * `WF_LOCKED`, `WF_VALIDATION`) or the account's (`WF_AUTHORIZATION_DENIED`,
 * `AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED`), and reaches `extensions.code` unchanged.
 *
 * The objects resolvers return carry their costly fields as functions, which graphql-js's
 * default resolver calls only when a query selects them (`steps`, `events`, `children`...).
 */

/** What the workflow fields need beyond the directory: the engine and the database. */
export interface WorkflowBackend {
  readonly engine: EngineDeps;
}

/** The engine's refusals when annal runs without one (a gateway built for tests of its own). */
class WorkflowsUnavailableError extends AnnalError {
  constructor() {
    super("ANNAL_WORKFLOWS_UNAVAILABLE", "this annal runs no workflow engine", { status: 503 });
  }
}

type Resolver = GraphQLFieldResolver<unknown, GatewayContext, Record<string, unknown>>;

/** Gives the workflow fields of Query and Mutation their resolvers, where the schema has them. */
export function attachWorkflowResolvers(schema: GraphQLSchema): void {
  const attach = (type: string, resolvers: Record<string, Resolver>) => {
    const fields = (
      schema.getType(type) as { getFields?: () => Record<string, unknown> }
    )?.getFields?.();
    if (!fields) return;
    for (const [name, resolve] of Object.entries(resolvers)) {
      const field = fields[name] as { resolve?: unknown } | undefined;
      if (field) field.resolve = resolve;
    }
  };
  attach("Query", {
    workflows: (_parent, _args, context) => catalog(context),
    instances: (_parent, args, context) => instances(context, args),
    instance: (_parent, args, context) => instance(context, args),
    myDialogs: (_parent, args, context) => myDialogs(context, args),
    changes: (_parent, args, context) => changes(context, args),
    failedWork: (_parent, args, context) => failedWork(context, args),
  });
  attach("Mutation", {
    startWorkflow: (_parent, args, context) => start(context, args),
    completeDialog: (_parent, args, context) => answer(context, args),
    cancelInstance: (_parent, args, context) => cancel(context, args),
    retryInstance: (_parent, args, context) => retry(context, args),
  });
}

function engineOf(context: GatewayContext): EngineDeps {
  if (!context.workflows) throw new WorkflowsUnavailableError();
  return context.workflows.engine;
}

/**
 * The viewer as the engine knows an actor. An account over its principal limit may neither
 * read nor command (the spec's AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED).
 */
function actorOf(viewer: Viewer): Actor {
  if (viewer.principalLimit) throw principalLimitError(viewer.principalLimit);
  return {
    accountId: viewer.account.id,
    name: viewer.account.name,
    dn: viewer.actorDN,
    principals: viewer.principals,
    access: viewer.access,
  };
}

/** A command's actor: its authority must be confirmed by its identity provider. */
function commandActor(viewer: Viewer): Actor {
  const actor = actorOf(viewer);
  assertAuthority(viewer);
  return actor;
}

// Arguments. The messages are the product documents': `Invalid <field>`, `Invalid <name> filter`.

const DEFINITION_NAME = /^[A-Za-z][A-Za-z0-9._-]{0,99}$/;
const DIALOG_ID = /^[0-9a-f-]{36}\.\d{1,9}$/;

function instanceIdArg(value: unknown, field = "id"): string {
  if (typeof value !== "string" || !UUID.test(value)) {
    throw new BadUserInputError(`Invalid ${field}`, {
      argument: field,
      hint: "an instance id is a UUID, as startWorkflow and instances return it",
    });
  }
  return value.toLowerCase();
}

function textFilter(value: unknown, name: string, pattern: RegExp): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !pattern.test(value)) {
    throw new BadUserInputError(`Invalid ${name} filter`, { argument: name });
  }
  return value;
}

// Views: what the schema's workflow types read.

const iso = (date: Date | string | null | undefined) =>
  date === null || date === undefined ? null : new Date(date).toISOString();

function actorView(actor: ActorRef | null | undefined) {
  return actor ? { id: actor.accountId, name: actor.name, dn: actor.dn } : null;
}

function errorView(error: RecordedError | null | undefined) {
  return error ? { code: error.code, message: error.message, name: error.name } : null;
}

/** How far an instance is read: now, or as it was at a moment. */
interface Moment {
  readonly at: Date | undefined;
  /** The moment the view is of (the database's clock when `at` is left out). */
  readonly asOf: Date;
}

async function momentOf(context: GatewayContext, at: Date | undefined): Promise<Moment> {
  return { at, asOf: at ?? (await databaseClock(engineOf(context).pool)) };
}

/** An instance the viewer may see, now or at `moment.at`; undefined otherwise. */
async function visibleInstance(
  context: GatewayContext,
  instanceId: string,
  moment: Moment,
): Promise<InstanceState | undefined> {
  const db = engineOf(context).pool;
  const state =
    moment.at === undefined
      ? await loadInstance(db, instanceId)
      : await instanceAt(db, instanceId, moment.at);
  return state && maySeeInstance(actorOf(context.viewer), state) ? state : undefined;
}

function instanceView(state: InstanceState, moment: Moment) {
  const calls = [...state.calls.values()].sort((a, b) => a.seq - b.seq);
  return {
    id: state.id,
    workflow: state.definition.name,
    version: state.definition.version,
    hash: state.definition.hash,
    state: state.status,
    parameters: state.parameters,
    result: state.result ?? null,
    error: errorView(state.error),
    startedBy: actorView(state.startedBy),
    startedAt: iso(state.startedAt),
    updatedAt: iso(state.updatedAt),
    until: state.until,
    asOf: iso(moment.asOf),
    parent: async (_args: unknown, context: GatewayContext) => {
      if (!state.parent) return null;
      const parent = await visibleInstance(context, state.parent.instanceId, moment);
      return parent ? instanceView(parent, moment) : null;
    },
    steps: () => calls.map((call) => stepView(call, moment)),
    dialogs: () =>
      calls.flatMap((call) =>
        call.kind === "dialog" ? [dialogView(state.definition.name, call, { state, moment })] : [],
      ),
    children: async (_args: unknown, context: GatewayContext) => {
      const ids =
        moment.at === undefined
          ? await childrenOf(engineOf(context).pool, state.id)
          : calls.flatMap((call) => (call.kind === "child" ? [call.childId] : []));
      const found = await Promise.all(ids.map((id) => visibleInstance(context, id, moment)));
      return found.flatMap((child) => (child ? [instanceView(child, moment)] : []));
    },
    deadlines: () => deadlinesOf(state, calls, moment.asOf),
    events: async (_args: unknown, context: GatewayContext) => {
      const events = await instanceEvents(engineOf(context).pool, state.id);
      // The events the state was folded from: up to its version, and at a past moment also
      // no later than it. Not by the view's moment alone: "now" is taken before the state is
      // read, and an instance that moved on in between would show its new state without the
      // events that brought it there.
      return events
        .filter(
          (event) =>
            event.streamVersion <= state.version &&
            (moment.at === undefined || event.occurredAt.getTime() <= moment.at.getTime()),
        )
        .map((event) => ({
          id: event.id,
          type: event.type,
          version: event.streamVersion,
          occurredAt: iso(event.occurredAt),
          data: event.data,
        }));
    },
    directoryChanges: (args: Record<string, unknown>, context: GatewayContext) =>
      changePage(
        context,
        { causeStream: workflowStream(state.id), ...(moment.at ? { to: moment.at } : {}) },
        args,
        `instance-changes:${state.id}`,
      ),
  };
}

function stepView(call: CallRecord, moment: Moment) {
  const base = { seq: call.seq, kind: call.kind, attempts: null, actingFor: null, child: null };
  switch (call.kind) {
    case "step":
      return {
        ...base,
        name: call.name,
        state: call.state,
        attempts: call.attempts,
        startedAt: iso(call.startedAt),
        endedAt: iso(call.endedAt),
        result: call.result ?? null,
        error: errorView(call.error),
        actingFor: actorView(call.actingFor),
      };
    case "dialog":
      return {
        ...base,
        name: call.name,
        state: call.state,
        startedAt: iso(call.openedAt),
        endedAt: iso(call.endedAt),
        result: call.answer ?? null,
        error: null,
        actingFor: actorView(call.by),
      };
    case "request":
      return {
        ...base,
        name: call.name,
        state: call.state,
        startedAt: iso(call.sentAt),
        endedAt: iso(call.endedAt),
        result: call.answer ?? null,
        error: null,
      };
    case "child":
      return {
        ...base,
        name: call.definition.name,
        state: call.state,
        startedAt: iso(call.startedAt),
        endedAt: iso(call.endedAt),
        result: call.result ?? null,
        error: errorView(call.error),
        child: async (_args: unknown, context: GatewayContext) => {
          const child = await visibleInstance(context, call.childId, moment);
          return child ? instanceView(child, moment) : null;
        },
      };
    case "value":
      return {
        ...base,
        name: call.valueKind,
        state: "recorded",
        startedAt: null,
        endedAt: null,
        result: call.value,
        error: null,
      };
  }
}

/**
 * A dialog; `of` is the instance it was read with (and the moment), left out when it comes from
 * the inbox, whose instance is read when asked for.
 */
function dialogView(
  workflow: string,
  call: Extract<CallRecord, { kind: "dialog" }>,
  of?: { readonly state: InstanceState; readonly moment: Moment },
) {
  return {
    id: call.dialogId,
    workflow,
    name: call.name,
    assignees: call.assignees,
    state: call.state,
    form: call.form ?? null,
    data: call.data ?? null,
    until: call.until,
    answer: call.answer ?? null,
    answeredBy: actorView(call.by),
    openedAt: iso(call.openedAt),
    endedAt: iso(call.endedAt),
    instance: async (_args: unknown, context: GatewayContext) => {
      if (of) return instanceView(of.state, of.moment);
      const moment = await momentOf(context, undefined);
      const state = await visibleInstance(context, call.dialogId.split(".")[0]!, moment);
      return state ? instanceView(state, moment) : null;
    },
  };
}

function deadlinesOf(state: InstanceState, calls: readonly CallRecord[], now: Date) {
  const deadlines: { kind: string; seq: number | null; name: string | null; dueAt: string }[] = [];
  if (state.until) {
    deadlines.push({
      kind: "instance",
      seq: null,
      name: state.definition.name,
      dueAt: state.until,
    });
  }
  for (const call of calls) {
    if ((call.kind === "dialog" || call.kind === "request") && call.until) {
      deadlines.push({ kind: call.kind, seq: call.seq, name: call.name, dueAt: call.until });
    } else if (call.kind === "child" && call.until) {
      deadlines.push({
        kind: "child",
        seq: call.seq,
        name: call.definition.name,
        dueAt: call.until,
      });
    } else if (call.kind === "step" && call.state === "retrying" && call.retryAt) {
      deadlines.push({ kind: "retry", seq: call.seq, name: call.name, dueAt: call.retryAt });
    }
  }
  return deadlines.map((deadline) => ({
    ...deadline,
    dueAt: iso(deadline.dueAt),
    passed: new Date(deadline.dueAt).getTime() <= now.getTime(),
  }));
}

// Queries.

async function catalog(context: GatewayContext) {
  const engine = engineOf(context);
  const actor = actorOf(context.viewer);
  const visible = engine.definitions
    .catalog()
    .filter((deployed) => maySeeDefinition(actor, deployed.definition));
  const inventory = visible.length > 0 ? await definitionInventory(engine.pool) : [];
  return visible.map((deployed) => ({
    name: deployed.name,
    version: deployed.version,
    hash: deployed.hash,
    title: deployed.definition.title ?? deployed.name,
    parameters: jsonSchemaOf(deployed.definition.parameters),
    startAccess: deployed.definition.access.start,
    versions: inventory
      .filter((stored) => stored.name === deployed.name)
      .map((stored) => stored.version),
  }));
}

const INSTANCE_STATES = new Set<InstanceStatus>([
  "RUNNING",
  "WAITING",
  "COMPLETED",
  "ERRORED",
  "CANCELLED",
]);

async function instances(context: GatewayContext, args: Record<string, unknown>) {
  const engine = engineOf(context);
  const actor = actorOf(context.viewer);
  const first = firstOf(args.first);
  const filter = {
    ...(args.state ? { status: args.state as InstanceStatus } : {}),
    ...optional("definition", textFilter(args.definition, "definition", DEFINITION_NAME)),
    ...optional("startedBy", textFilter(args.startedBy, "startedBy", /^.{1,200}$/s)),
    ...optional(
      "since",
      momentArgument(args.since, context.clock(), {
        argument: "since",
        message: "Invalid since filter",
      }),
    ),
  };
  if (filter.status !== undefined && !INSTANCE_STATES.has(filter.status)) {
    throw new BadUserInputError("Invalid state filter", { argument: "state" });
  }
  // The cursor belongs to the list its filters make: another list's is refused.
  const scope = `instances:${actor.accountId}:${JSON.stringify(filter)}`;
  const after =
    args.after === undefined || args.after === null
      ? undefined
      : decodeKeyCursor(args.after, scope, UUID);
  const page = await listInstances(engine.pool, actor, filter, {
    first,
    ...(after ? { after } : {}),
  });
  const moment = await momentOf(context, undefined);
  const nodes = page.instances.map((state) => instanceView(state, moment));
  const last = page.instances.at(-1);
  return {
    nodes,
    pageInfo: {
      hasNextPage: page.more,
      hasPreviousPage: after !== undefined,
      startCursor: page.instances[0] ? encodeKeyCursor(page.instances[0].id, scope) : null,
      endCursor: last ? encodeKeyCursor(last.id, scope) : null,
    },
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

async function instance(context: GatewayContext, args: Record<string, unknown>) {
  const id = instanceIdArg(args.id);
  const at = momentArgument(args.at, context.clock(), { argument: "at", message: "Invalid at" });
  const moment = await momentOf(context, at);
  const state = await visibleInstance(context, id, moment);
  if (!state) {
    throw new WorkflowRefusal(
      "WF_NOT_FOUND",
      at ? `no instance ${id} at ${at.toISOString()}` : `no instance ${id}`,
    );
  }
  return instanceView(state, moment);
}

async function myDialogs(context: GatewayContext, args: Record<string, unknown>) {
  const engine = engineOf(context);
  const actor = actorOf(context.viewer);
  const first = firstOf(args.first);
  const scope = `dialogs:${actor.accountId}`;
  const after =
    args.after === undefined || args.after === null
      ? undefined
      : decodeKeyCursor(args.after, scope, DIALOG_ID);
  const rows = await inboxOf(engine.pool, actor, first + 1, after);
  const page = rows.slice(0, first);
  const nodes = page.map((row) =>
    dialogView(row.workflow, {
      kind: "dialog",
      seq: row.seq,
      name: row.name,
      dialogId: row.dialog_id,
      assignees: row.assignees,
      form: row.form,
      data: row.data,
      until: iso(row.until),
      state: row.state as "pending",
      openedAt: row.opened_at,
    }),
  );
  return {
    nodes,
    pageInfo: {
      hasNextPage: rows.length > first,
      hasPreviousPage: after !== undefined,
      startCursor: page[0] ? encodeKeyCursor(page[0].dialog_id, scope) : null,
      endCursor: page.at(-1) ? encodeKeyCursor(page.at(-1)!.dialog_id, scope) : null,
    },
  };
}

const LOG_POSITION = /^(\d{1,20}):(\d{1,20})$/;

/** A page of the change feed, in log order, with keyset cursors of log positions. */
async function changePage(
  context: GatewayContext,
  filter: ChangeFilter,
  args: Record<string, unknown>,
  scope: string,
) {
  const db = engineOf(context).pool;
  const first = firstOf(args.first);
  let after: LogPosition | undefined;
  if (args.after !== undefined && args.after !== null) {
    const [, transactionId, position] = LOG_POSITION.exec(
      decodeKeyCursor(args.after, scope, LOG_POSITION),
    )!;
    after = { transactionId: transactionId!, position: Number(position) };
  }
  const page = await changeFeed(db, filter, {
    direction: "forward",
    limit: first,
    ...(after ? { after } : {}),
  });
  const cursor = (change: ChangeRecord) =>
    encodeKeyCursor(`${change.transactionId}:${change.position}`, scope);
  return {
    nodes: page.changes.map((change) => changeView(change)),
    pageInfo: {
      hasNextPage: page.more,
      hasPreviousPage: after !== undefined,
      startCursor: page.changes[0] ? cursor(page.changes[0]) : null,
      endCursor: page.changes.at(-1) ? cursor(page.changes.at(-1)!) : null,
    },
  };
}

function changeView(change: ChangeRecord) {
  return {
    id: change.eventId,
    entryUUID: change.entryUUID,
    entryType: change.entryType,
    dn: change.dn,
    oldDn: change.oldDn,
    changeType: change.changeType,
    occurredAt: iso(change.occurredAt),
    recordedAt: iso(change.recordedAt),
    actor: change.actor,
    attributes: change.attributes,
    cause: causeView(change.cause),
  };
}

function causeView(cause: ChangeCause | null) {
  if (!cause) return null;
  switch (cause.kind) {
    case "changeEvent":
      return { __typename: "ChangeEventCause", ...cause };
    case "mutation":
      return { __typename: "MutationCause", ...cause };
    case "event":
      return { __typename: "EventCause", ...cause };
    case "workflow":
      return {
        __typename: "WorkflowCause",
        id: cause.id,
        instanceId: cause.instanceId,
        workflow: cause.workflow,
        step: cause.step,
        attempt: cause.attempt,
        approvedBy: cause.approvedBy && {
          id: cause.approvedBy.accountId,
          name: cause.approvedBy.name,
          dn: cause.approvedBy.dn,
        },
        instance: async (_args: unknown, context: GatewayContext) => {
          if (!UUID.test(cause.instanceId)) return null;
          const moment = await momentOf(context, undefined);
          const state = await visibleInstance(context, cause.instanceId, moment);
          return state ? instanceView(state, moment) : null;
        },
      };
  }
}

/** `Query.changes`: the directory's change feed, for accounts that may read it. */
async function changes(context: GatewayContext, args: Record<string, unknown>) {
  assertAccess(context.viewer, "read");
  const db: Queryable = engineOf(context).pool;
  let entryUUID: string | undefined;
  const entry = args.entry;
  if (typeof entry === "string") {
    if (UUID.test(entry)) entryUUID = entry.toLowerCase();
    else {
      try {
        parseDN(entry);
      } catch {
        throw new BadUserInputError("Invalid entry filter", {
          argument: "entry",
          hint: "an entry's DN or its entryUUID",
        });
      }
      // An entry never known has no changes: an empty page, not an error.
      entryUUID =
        (await entryUUIDForDn(db, entry, "ever")) ?? "00000000-0000-0000-0000-000000000000";
    }
  }
  return changePage(context, entryUUID ? { entryUUID } : {}, args, `changes:${entryUUID ?? ""}`);
}

/** `Query.failedWork`, for operators. */
async function failedWork(context: GatewayContext, args: Record<string, unknown>) {
  assertAccess(context.viewer, "operator");
  const states = args.state as string[] | null | undefined;
  for (const state of states ?? []) {
    if (!(FAILED_WORK_STATES as readonly string[]).includes(state)) {
      throw new BadUserInputError("Invalid state filter", {
        argument: "state",
        hint: `one of ${FAILED_WORK_STATES.join(", ")}`,
      });
    }
  }
  const items = await listFailedWork(engineOf(context).pool, {
    ...(states ? { states: states as FailedWorkState[] } : {}),
    limit: firstOf(args.first),
  });
  return items.map((item) => ({
    id: item.id,
    hook: item.hook,
    webhook: item.webhook,
    source: item.source,
    eventId: item.eventId,
    type: item.type,
    subject: item.subject,
    state: item.state,
    attempts: item.attempts,
    errorCode: item.lastError.code,
    errorMessage: item.lastError.message,
    failedAt: iso(item.failedAt),
    retries: item.retries,
  }));
}

// Commands: each answers with what it changed, read back from the log (not the projection).

async function currentView(context: GatewayContext, instanceId: string) {
  const moment = await momentOf(context, undefined);
  const state = await loadInstance(engineOf(context).pool, instanceId);
  if (!state) throw new WorkflowRefusal("WF_NOT_FOUND", `no instance ${instanceId}`);
  return instanceView(state, moment);
}

async function start(context: GatewayContext, args: Record<string, unknown>) {
  const engine = engineOf(context);
  const actor = commandActor(context.viewer);
  const startKey = args.startKey;
  if (startKey !== undefined && startKey !== null) {
    if (typeof startKey !== "string" || !/^.{1,200}$/s.test(startKey)) {
      throw new BadUserInputError("Invalid startKey", { argument: "startKey" });
    }
  }
  const { instanceId } = await startWorkflow(engine, {
    name: args.name as string,
    ...(typeof args.version === "number" ? { version: args.version } : {}),
    parameters: args.parameters,
    as: actor,
    // One account's key: another account's same key starts its own instance.
    ...(typeof startKey === "string" ? { startKey: `${actor.accountId}:${startKey}` } : {}),
  });
  return currentView(context, instanceId);
}

async function answer(context: GatewayContext, args: Record<string, unknown>) {
  const engine = engineOf(context);
  const actor = commandActor(context.viewer);
  const id = args.id;
  if (typeof id !== "string" || !DIALOG_ID.test(id)) {
    throw new BadUserInputError("Invalid id", {
      argument: "id",
      hint: "a dialog id is `<instance id>.<seq>`, as myDialogs returns it",
    });
  }
  const { instanceId } = await completeDialog(engine, {
    dialogId: id,
    answer: args.answer,
    as: actor,
  });
  const state = await loadInstance(engine.pool, instanceId);
  const call = [...(state?.calls.values() ?? [])].find(
    (candidate) => candidate.kind === "dialog" && candidate.dialogId === id,
  );
  if (!state || call?.kind !== "dialog")
    throw new WorkflowRefusal("WF_NOT_FOUND", `no dialog ${id}`);
  return dialogView(state.definition.name, call, {
    state,
    moment: await momentOf(context, undefined),
  });
}

async function cancel(context: GatewayContext, args: Record<string, unknown>) {
  const instanceId = instanceIdArg(args.id);
  const reason = args.reason;
  if (
    reason !== undefined &&
    reason !== null &&
    (typeof reason !== "string" || reason.length > 500)
  ) {
    throw new BadUserInputError("Invalid reason", { argument: "reason" });
  }
  await cancelInstance(engineOf(context), {
    instanceId,
    as: commandActor(context.viewer),
    ...(typeof reason === "string" ? { reason } : {}),
  });
  return currentView(context, instanceId);
}

async function retry(context: GatewayContext, args: Record<string, unknown>) {
  const instanceId = instanceIdArg(args.id);
  await retryInstance(engineOf(context), { instanceId, as: commandActor(context.viewer) });
  return currentView(context, instanceId);
}
