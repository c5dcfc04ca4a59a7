import type { DialogEscalation, InstanceState } from "../../../projections/workflows/index.ts";
import type { Pool } from "../../db/index.ts";
import { maySeeDefinition, maySeeInstance, type Actor } from "../access.ts";
import { instanceEvents, loadInstance } from "../advance.ts";
import { delegatorAmong } from "../delegation/index.ts";
import type { Definitions } from "../definitions.ts";
import { WorkflowRefusal } from "../errors.ts";
import { databaseClock } from "../lock.ts";
import {
  childrenOf,
  definitionInventory,
  inboxOf,
  instanceAt,
  listInstances,
  type InstanceFilter,
} from "../queries.ts";
import { jsonSchemaOf } from "../../schema/index.ts";
import {
  callsOf,
  dialogView,
  instanceView,
  iso,
  type DialogView,
  type InstanceView,
  type Moment,
} from "./views.ts";

/** A deployed workflow as the catalog shows it. */
export interface CatalogEntryView {
  readonly name: string;
  readonly version: number;
  readonly hash: string;
  readonly title: string;
  readonly parameters: unknown;
  readonly startAccess: unknown;
  /** Every stored version of it. */
  readonly versions: readonly number[];
}

/** One event of an instance's stream. */
export interface InstanceEventView {
  readonly id: string;
  readonly type: string;
  readonly version: number;
  readonly occurredAt: string | null;
  readonly data: unknown;
}

/**
 * The workflow module's read API: what one actor may see of the workflows, instances (now, or
 * `at` a moment), their children, events and dialogs, as views (`./views.ts`). Every read
 * hides what the actor may not see: an instance it may not see reads as none.
 *
 * @example
 * const reader = new WorkflowReader(pool, actor);
 * const moment = await reader.moment(at);
 * const view = await reader.instance(id, moment); // undefined: none, or not the actor's to see
 */
export class WorkflowReader {
  readonly #db: Pool;
  readonly #actor: Actor;

  constructor(db: Pool, actor: Actor) {
    this.#db = db;
    this.#actor = actor;
  }

  /** The moment a read is of: `at`, or now by the database's clock. */
  async moment(at: Date | undefined): Promise<Moment> {
    return { at, asOf: at ?? (await databaseClock(this.#db)) };
  }

  /** An instance the actor may see, now or at `moment.at`; undefined otherwise. */
  async instance(instanceId: string, moment: Moment): Promise<InstanceView | undefined> {
    const state =
      moment.at === undefined
        ? await loadInstance(this.#db, instanceId)
        : await instanceAt(this.#db, instanceId, moment.at);
    return state && (await this.#maySee(state, moment.asOf))
      ? instanceView(state, moment)
      : undefined;
  }

  /**
   * `maySeeInstance`, and a delegate's view: whoever answered one of its dialogs (for the
   * assignee, through a delegation), or may answer one still pending by a delegation in force
   * at `at`, sees the instance the dialog belongs to, as the assignee does.
   */
  async #maySee(state: InstanceState, at: Date): Promise<boolean> {
    if (maySeeInstance(this.#actor, state)) return true;
    for (const call of state.calls.values()) {
      if (call.kind !== "dialog") continue;
      if (call.by?.accountId === this.#actor.accountId) return true;
      if (
        call.state === "pending" &&
        (await delegatorAmong(this.#db, this.#actor, call.assignees, at))
      ) {
        return true;
      }
    }
    return false;
  }

  /**
   * An instance as it is now, read back from its log after a command (whether or not the
   * projection has caught up): `WF_NOT_FOUND` when there is none.
   */
  async afterCommand(
    instanceId: string,
  ): Promise<{ readonly instance: InstanceView; readonly moment: Moment }> {
    const moment = await this.moment(undefined);
    const state = await loadInstance(this.#db, instanceId);
    if (!state) throw new WorkflowRefusal("WF_NOT_FOUND", `no instance ${instanceId}`);
    return { instance: instanceView(state, moment), moment };
  }

  /**
   * A dialog and its instance as they are now, read back from the instance's log after the
   * dialog was answered: `WF_NOT_FOUND` when there is no such dialog.
   */
  async dialogAfterCommand(
    instanceId: string,
    dialogId: string,
  ): Promise<{
    readonly dialog: DialogView;
    readonly instance: InstanceView;
    readonly moment: Moment;
  }> {
    const moment = await this.moment(undefined);
    const state = await loadInstance(this.#db, instanceId);
    const call =
      state && callsOf(state).find((c) => c.kind === "dialog" && c.dialogId === dialogId);
    if (!state || call?.kind !== "dialog") {
      throw new WorkflowRefusal("WF_NOT_FOUND", `no dialog ${dialogId}`);
    }
    return {
      dialog: dialogView(state.id, state.definition.name, call),
      instance: instanceView(state, moment),
      moment,
    };
  }

  /** The children of an instance the actor may see: now, or those started by `moment.at`. */
  async children(parent: InstanceView, moment: Moment): Promise<InstanceView[]> {
    const ids =
      moment.at === undefined
        ? await childrenOf(this.#db, parent.id)
        : parent.steps.flatMap((step) => (step.childId === null ? [] : [step.childId]));
    const found = await Promise.all(ids.map((id) => this.instance(id, moment)));
    return found.flatMap((child) => (child ? [child] : []));
  }

  /**
   * The events an instance's view was folded from: up to its stream version, and at a past
   * moment also no later than it. Not by the view's moment alone: "now" is taken before the
   * state is read, and an instance that moved on in between would show its new state without
   * the events that brought it there.
   */
  async events(view: InstanceView, moment: Moment): Promise<InstanceEventView[]> {
    const events = await instanceEvents(this.#db, view.id);
    return events
      .filter(
        (event) =>
          event.streamVersion <= view.streamVersion &&
          (moment.at === undefined || event.occurredAt.getTime() <= moment.at.getTime()),
      )
      .map((event) => ({
        id: event.id,
        type: event.type,
        version: event.streamVersion,
        occurredAt: iso(event.occurredAt),
        data: event.data,
      }));
  }

  /** A page of the instances the actor may see, from the `workflows` projection. */
  async instances(
    filter: InstanceFilter,
    page: { readonly first: number; readonly after?: string },
  ): Promise<{
    readonly instances: InstanceView[];
    readonly more: boolean;
    readonly moment: Moment;
  }> {
    const found = await listInstances(this.#db, this.#actor, filter, page);
    const moment = await this.moment(undefined);
    return {
      instances: found.instances.map((state) => instanceView(state, moment)),
      more: found.more,
      moment,
    };
  }

  /**
   * The pending dialogs the actor may answer (as an assignee, or as a delegate: marked with
   * `delegatedBy`), the oldest first, after dialog `after`, but those of the workflows `except`.
   */
  async inbox(
    limit: number,
    after?: string,
    except: readonly string[] = [],
  ): Promise<DialogView[]> {
    const rows = await inboxOf(
      this.#db,
      this.#actor,
      limit,
      after,
      await databaseClock(this.#db),
      except,
    );
    return rows.map((row) =>
      dialogView(
        row.instance_id,
        row.workflow,
        {
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
          ...(row.escalation ? { escalation: row.escalation as DialogEscalation } : {}),
        },
        row.delegatedBy,
      ),
    );
  }

  /** The deployed workflows the actor may see, with every stored version of each. */
  async catalog(definitions: Definitions): Promise<CatalogEntryView[]> {
    const visible = definitions
      .catalog()
      .filter((deployed) => maySeeDefinition(this.#actor, deployed.definition));
    const inventory = visible.length > 0 ? await definitionInventory(this.#db) : [];
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
}
