import { randomUUID } from "node:crypto";
import {
  annalEvent,
  REVIEW_ITEM_WORKFLOW,
  reviewCampaignStream,
  type ReviewItem,
} from "../events/index.ts";
import { AnnalError } from "../errors/index.ts";
import type { LogPosition } from "../store/index.ts";
import {
  actorRef,
  databaseClock,
  deadline,
  startWorkflows,
  type Actor,
  type EngineDeps,
  type Until,
} from "../workflow/index.ts";
import { holdsDirectory } from "../history/index.ts";
import { waitForProjection } from "../projector/index.ts";
import { CHANGES_PROJECTION } from "../../projections/changes/index.ts";
import { ENTRY_VERSIONS_PROJECTION } from "../../projections/entry-versions/index.ts";
import { REVIEWS_PROJECTION } from "../../projections/reviews/index.ts";
import type { ReviewDefinition } from "./definition.ts";
import type { ReviewItemParameters } from "./item-workflow.ts";
import { reviewItemsAt } from "./items.ts";

/** `ANNAL_HISTORY_BUILDING`: a campaign cannot start before the history holds the directory. */
export class HistoryBuildingPending extends AnnalError {
  constructor(review: string) {
    super(
      "ANNAL_HISTORY_BUILDING",
      `review ${review} cannot start yet: annal's first import of the directory is still being recorded`,
      { headers: { "retry-after": "5" }, details: { retryAfter: 5 } },
    );
  }
}

/** Items a `ReviewItemsListed` event carries at most. */
const ITEMS_PER_EVENT = 500;

export interface StartedCampaign {
  readonly campaignId: string;
  readonly deadline: string;
  readonly items: number;
  readonly unreviewable: readonly { readonly group: string; readonly member: string }[];
  /**
   * Where the log holds the campaign's start and its items: a reader of the reviews
   * projection that waits for it sees the campaign and every item (their instances come later
   * in the log, one batch after another).
   */
  readonly listed: LogPosition;
}

/**
 * Starts a campaign of `definition`: reads its items from the history at the database's clock
 * (`reviewItemsAt`), records `ReviewCampaignStarted` and the items (`ReviewItemsListed`) on the
 * campaign's stream in one transaction, and starts one instance of `annal.review-item` per item
 * (idempotent by campaign and item: a start cut short is completed by `resumeCampaign`).
 *
 * @throws AnnalError `ANNAL_REVIEW_NOT_CONFIGURED` when annal deploys no review item definition,
 *   `ANNAL_HISTORY_BUILDING` while capture's first import is not in the history yet.
 */
export async function startCampaign(
  deps: EngineDeps,
  definition: ReviewDefinition,
  options: {
    readonly as: Actor;
    /** The campaign's id (a schedule's, the same in every process); default a new one. */
    readonly campaignId?: string;
  },
): Promise<StartedCampaign> {
  if (!deps.definitions.current(REVIEW_ITEM_WORKFLOW)) {
    throw new AnnalError(
      "ANNAL_REVIEW_NOT_CONFIGURED",
      `no review can start: this annal deploys no ${REVIEW_ITEM_WORKFLOW} definition`,
      { hint: "configure the review as a [[reviews]] table in annal.toml and restart annal" },
    );
  }
  // The items are read from the history: every change recorded before the start must be in
  // it, and it must hold the directory (capture's first import recorded and projected).
  const head = await deps.store.head();
  for (const projection of [ENTRY_VERSIONS_PROJECTION, CHANGES_PROJECTION, REVIEWS_PROJECTION]) {
    await waitForProjection(deps.pool, projection, head, 30_000);
  }
  if (!(await holdsDirectory(deps.pool, ENTRY_VERSIONS_PROJECTION))) {
    throw new HistoryBuildingPending(definition.name);
  }
  const now = await databaseClock(deps.pool);
  const { items, unreviewable } = await reviewItemsAt(deps.pool, definition, now);
  const due = deadline(
    untilOf(definition.deadline, definition.calendar),
    now,
    null,
    deps.calendars,
  )!;
  const campaignId = options.campaignId ?? randomUUID();
  const events = [
    annalEvent("ReviewCampaignStarted", {
      campaignId,
      review: definition.name,
      title: definition.title ?? definition.name,
      definition,
      startedAt: now.toISOString(),
      deadline: due,
      startedBy: actorRef(options.as),
      itemCount: items.length,
      unreviewable,
    }),
  ];
  for (let at = 0; at < items.length; at += ITEMS_PER_EVENT) {
    events.push(
      annalEvent("ReviewItemsListed", {
        campaignId,
        items: items.slice(at, at + ITEMS_PER_EVENT),
      }) as never,
    );
  }
  // Only where the log holds them is kept: the recorded events carry their data as the store
  // read it back, a second copy of every item (120 MiB at 100,000), which the start held until
  // its last instance was recorded (a heap snapshot of `annal start` during a campaign's start).
  const listed = await appendToCampaign(deps, campaignId, events);
  await startItems(deps, definition, campaignId, due, items, options.as);
  return { campaignId, deadline: due, items: items.length, unreviewable, listed };
}

/** Records a campaign's start and items; answers where its last event is. */
async function appendToCampaign(
  deps: EngineDeps,
  campaignId: string,
  events: Parameters<EngineDeps["store"]["appendToStream"]>[1],
): Promise<LogPosition> {
  const recorded = await deps.store.appendToStream(reviewCampaignStream(campaignId), events, {
    expectedVersion: "no_stream",
  });
  const last = recorded.events.at(-1)!;
  return { transactionId: last.transactionId, position: last.position };
}

/** Starts the instances of a campaign's items that have none yet (after a start cut short). */
export async function resumeCampaign(
  deps: EngineDeps,
  campaignId: string,
  options: { readonly as: Actor },
): Promise<number> {
  const events = await deps.store.readStream(reviewCampaignStream(campaignId));
  const started = events.find((e) => e.type === "ReviewCampaignStarted")?.data as
    { definition: ReviewDefinition; deadline: string } | undefined;
  if (!started) {
    throw new AnnalError("ANNAL_REVIEW_NOT_FOUND", `no review campaign ${campaignId}`);
  }
  const items = events
    .filter((e) => e.type === "ReviewItemsListed")
    .flatMap((e) => (e.data as { items: ReviewItem[] }).items);
  return startItems(deps, started.definition, campaignId, started.deadline, items, options.as);
}

async function startItems(
  deps: EngineDeps,
  definition: ReviewDefinition,
  campaignId: string,
  due: string,
  items: readonly ReviewItem[],
  as: Actor,
): Promise<number> {
  const escalation = definition.escalation.map((level) => ({
    after: level.after,
    to: level.to.flatMap((to) =>
      to === "fallback"
        ? definition.reviewers.fallback
          ? [definition.reviewers.fallback]
          : []
        : [to],
    ),
    mode: level.mode,
  }));
  let created = 0;
  // In batches, each one transaction (`startWorkflows`): one per item cost a commit each.
  for (let at = 0; at < items.length; at += ITEMS_PER_EVENT) {
    const results = await startWorkflows(
      deps,
      items.slice(at, at + ITEMS_PER_EVENT).map((item) => {
        const parameters: ReviewItemParameters = {
          campaignId,
          itemId: item.itemId,
          groupDn: item.groupDn,
          memberDn: item.memberDn,
          attribute: item.attribute,
          reviewers: item.reviewers,
          until: due,
          escalation,
          calendar: definition.calendar ?? null,
          undecided: definition.undecided,
          reasonRequiredForKeep: definition.reasonRequiredForKeep,
        };
        return {
          name: REVIEW_ITEM_WORKFLOW,
          parameters,
          as,
          trusted: true,
          startKey: `review:${campaignId}:${item.itemId}`,
        };
      }),
      // Each item's dialog opened with its start: decidable at once, and no wake-up of the
      // engine per item (100,000 advances took ten minutes after the start).
      { untilFirstWait: true },
    );
    created += results.filter((result) => result.created).length;
  }
  return created;
}

/** The deadline as the engine reads it: business time counted in the named calendar. */
function untilOf(text: string, calendar: string | undefined): Until {
  if (calendar === undefined || !/bd|bh/.test(text)) return text;
  const days = /(\d+)bd/.exec(text)?.[1];
  const hours = /(\d+)bh/.exec(text)?.[1];
  return days !== undefined
    ? { businessDays: Number(days), ...(hours ? { businessHours: Number(hours) } : {}), calendar }
    : { businessHours: Number(hours), calendar };
}
