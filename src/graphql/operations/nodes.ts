import DataLoader from "dataloader";
import { REVIEW_ITEM_WORKFLOW, workflowStream } from "../../events/index.ts";
import {
  changeFeed,
  UUID,
  type ChangeCause,
  type ChangeFilter,
  type ChangeRecord,
} from "../../history/index.ts";
import {
  isReviewItemRef,
  reviewItemData,
  type ReviewItemData,
  type ReviewItemRef,
} from "../../reviews/index.ts";
import type { LogPosition } from "../../store/index.ts";
import {
  type DialogView,
  type InstanceView,
  type Moment,
  type StepView,
} from "../../workflow/index.ts";
import { decodeKeyCursor, encodeKeyCursor, firstOf } from "../connection.ts";
import type { GatewayContext } from "../context.ts";
import { engineOf, readerOf } from "./engine.ts";

/**
 * The objects the workflow operations answer with: the workflow module's views, mapped to the
 * schema's types, with the fields a query follows to other objects (an instance's parent,
 * children, events and directory changes, a step's child, a dialog's instance, a change's
 * cause) as functions, which graphql-js's default resolver calls only when a query selects them.
 */

/** ISO 8601 text of a time, null for none. */
export const iso = (date: Date | string | null | undefined): string | null =>
  date === null || date === undefined ? null : new Date(date).toISOString();

type Link<T> = (args: Record<string, unknown>, context: GatewayContext) => Promise<T>;

/** A `WorkflowInstance`, as it was at `moment`. */
export function instanceNode(view: InstanceView, moment: Moment) {
  const parent: Link<unknown> = async (_args, context) => {
    if (view.parentId === null) return null;
    const found = await readerOf(context).instance(view.parentId, moment);
    return found ? instanceNode(found, moment) : null;
  };
  const children: Link<unknown[]> = async (_args, context) =>
    (await readerOf(context).children(view, moment)).map((child) => instanceNode(child, moment));
  return {
    ...view,
    parent,
    steps: view.steps.map((step) => stepNode(step, moment)),
    dialogs: view.dialogs.map((dialog) => dialogNode(dialog, { instance: view, moment })),
    children,
    events: (_args: unknown, context: GatewayContext) => readerOf(context).events(view, moment),
    directoryChanges: (args: Record<string, unknown>, context: GatewayContext) =>
      changePage(
        context,
        { causeStream: workflowStream(view.id), ...(moment.at ? { to: moment.at } : {}) },
        args,
        `instance-changes:${view.id}`,
      ),
  };
}

function stepNode(step: StepView, moment: Moment) {
  const childId = step.childId;
  return {
    ...step,
    child:
      childId === null
        ? null
        : async (_args: unknown, context: GatewayContext) => {
            const child = await readerOf(context).instance(childId, moment);
            return child ? instanceNode(child, moment) : null;
          },
  };
}

/**
 * A `Dialog`; `of` is the instance it was read with (and the moment), left out when it comes
 * from the inbox, whose instance is read when asked for.
 */
export function dialogNode(
  dialog: DialogView,
  of?: { readonly instance: InstanceView; readonly moment: Moment },
) {
  const { data } = dialog;
  return {
    ...dialog,
    // A review item's dialog (version 2 of its workflow) refers to its item: shown as the
    // reviews projection lists it, as version 1 recorded it in the dialog.
    data:
      dialog.workflow === REVIEW_ITEM_WORKFLOW && isReviewItemRef(data)
        ? async (_args: unknown, context: GatewayContext) => reviewItemsOf(context).load(data)
        : data,
    instance: async (_args: unknown, context: GatewayContext) => {
      if (of) return instanceNode(of.instance, of.moment);
      return instanceNow(context, dialog.instanceId);
    },
  };
}

const reviewItemLoaders = new WeakMap<
  GatewayContext,
  DataLoader<ReviewItemRef, ReviewItemData | null, string>
>();

/** The review items a request's dialogs refer to, read in one statement a tick. */
function reviewItemsOf(context: GatewayContext) {
  let loader = reviewItemLoaders.get(context);
  if (!loader) {
    const { pool } = engineOf(context);
    loader = new DataLoader((refs) => reviewItemData(pool, refs), {
      cacheKeyFn: (ref) => `${ref.campaignId}\n${ref.itemId}`,
    });
    reviewItemLoaders.set(context, loader);
  }
  return loader;
}

/** An instance as it is now, if the viewer may see it. */
async function instanceNow(context: GatewayContext, instanceId: string) {
  const reader = readerOf(context);
  const moment = await reader.moment(undefined);
  const view = await reader.instance(instanceId, moment);
  return view ? instanceNode(view, moment) : null;
}

const LOG_POSITION = /^(\d{1,20}):(\d{1,20})$/;

/** A page of the change feed, in log order, with keyset cursors of log positions. */
export async function changePage(
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
    nodes: page.changes.map((change) => changeNode(change)),
    pageInfo: {
      hasNextPage: page.more,
      hasPreviousPage: after !== undefined,
      startCursor: page.changes[0] ? cursor(page.changes[0]) : null,
      endCursor: page.changes.at(-1) ? cursor(page.changes.at(-1)!) : null,
    },
  };
}

function changeNode(change: ChangeRecord) {
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
    cause: causeNode(change.cause),
  };
}

function causeNode(cause: ChangeCause | null) {
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
        instance: async (_args: unknown, context: GatewayContext) =>
          UUID.test(cause.instanceId) ? instanceNow(context, cause.instanceId) : null,
      };
  }
}
