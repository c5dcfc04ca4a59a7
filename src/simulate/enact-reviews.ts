import { randomUUID } from "node:crypto";
import { withTransaction, type Pool } from "../db/index.ts";
import { reviewCampaignStream, type ReviewItem } from "../events/index.ts";
import type { Logger } from "../logger.ts";
import { startJobs } from "../jobs/index.ts";
import { Projector, waitForProjection } from "../projector/index.ts";
import { decideItems, startCampaign, type ReviewDefinition } from "../reviews/index.ts";
import { appendToStreams, EventStore, logOrder, type StreamAppend } from "../store/index.ts";
import type { Calendars } from "../time/index.ts";
import { loadInstance, WAKE_QUEUE, type Actor, type EngineDeps } from "../workflow/index.ts";
import type { Definitions } from "../workflow/index.ts";
import { changesProjection } from "../../projections/changes/index.ts";
import {
  ENTRY_VERSIONS_PROJECTION,
  entryVersionsProjection,
} from "../../projections/entry-versions/index.ts";
import { reviewsProjection } from "../../projections/reviews/index.ts";
import { workflowsProjection } from "../../projections/workflows/index.ts";
import { FINAL, settle, silent, stampedByStoppedClock, type EnactedEvent } from "./enact.ts";
import { Recorders } from "./recorders.ts";
import { scratchDatabase, setScratchClock } from "./scratch.ts";
import type { DirectoryWrite } from "./writes.ts";

/** A reviewer's decision on an item of a past campaign. */
export interface PastReviewDecision {
  readonly at: Date;
  readonly itemId: string;
  readonly as: Actor;
  readonly decision: "keep" | "revoke";
  readonly reason?: string;
}

/** A campaign started in the past, and how its reviewers decided its items then. */
export interface PastCampaignPlan {
  readonly at: Date;
  readonly definition: ReviewDefinition;
  readonly campaignId: string;
  readonly startedBy: Actor;
  /** Given the items the start listed, who decided which, how and when. */
  readonly decide: (items: readonly ReviewItem[]) => readonly PastReviewDecision[];
}

/** A directory write a step of an item made (noted, not made), with its step's event. */
export interface EnactedStepWrite {
  readonly instanceId: string;
  readonly stepEvent: string;
  readonly write: DirectoryWrite;
}

/**
 * The past the campaigns read and act on, given as the clock passes it: what capture recorded
 * after a revocation depends on the revocation, so it is asked for moment by moment.
 */
export interface PastHistory {
  /** The events up to `moment` not given yet, in the order of their moments. */
  until(moment: Date): readonly { readonly at: Date; readonly batch: readonly StreamAppend[] }[];
  /** A write a step made: the change capture records of it joins the history. */
  written(write: EnactedStepWrite): void;
}

export interface ReviewEnactOptions {
  readonly live: Pool;
  /** The deployed definitions, `annal.review-item` among them. */
  readonly definitions: Definitions;
  readonly plans: readonly PastCampaignPlan[];
  readonly history: PastHistory;
  readonly base: string;
  readonly calendars?: Calendars;
  /** The clock stops here: decisions and deadlines after it are not enacted. */
  readonly until: Date;
  readonly log?: Pick<Logger, "warn">;
}

export interface EnactedReviews {
  /** The campaigns' and their items' events (not the history's), in the order appended. */
  readonly events: readonly EnactedEvent[];
  readonly writes: readonly EnactedStepWrite[];
  /** The timers of the instances still waiting at `until` (an open campaign's deadline). */
  readonly timers: readonly { instanceId: string; dueAt: Date; reason: string }[];
  /** The history's events by their log position in the scratch log (items name positions). */
  readonly historyIds: ReadonlyMap<number, string>;
  readonly campaigns: readonly { readonly campaignId: string; readonly items: number }[];
}

/**
 * Past access review campaigns as the deployed annal would have recorded them: in a scratch
 * database on a stopped clock, the history is appended as the clock reaches its moments and
 * projected (the campaign's start reads its items from the history projections, as a live
 * start does), each campaign is started by `startCampaign` at its moment, its items decided by
 * `decideItems` at theirs (the dialogs' answers: the engine checks the reviewer), its deadline
 * passed; a revocation's step is the engine's, its write noted by the recorder and handed to
 * the history, whose later moments then hold the change. The caller appends the events.
 */
export async function enactPastReviews(options: ReviewEnactOptions): Promise<EnactedReviews> {
  const scratch = await scratchDatabase(options.live);
  try {
    const pool = scratch.pool;
    await stampedByStoppedClock(pool);
    const projector = await Projector.start({
      pool,
      projections: [
        entryVersionsProjection,
        changesProjection,
        workflowsProjection,
        reviewsProjection,
      ],
      log: silent,
    });
    const jobs = await startJobs({ pool, log: silent });
    try {
      await jobs.ensureQueue(WAKE_QUEUE);
      const store = await EventStore.open(pool);
      const given = new Set<string>();
      const writes: EnactedStepWrite[] = [];
      /** The engine, with a recorder for the directory (read from the scratch's history). */
      const engine = () => {
        const recorders = new Recorders(pool, pool, options.base);
        const deps: EngineDeps = {
          pool,
          store,
          jobs,
          definitions: options.definitions,
          bindings: { pool, log: silent, replace: recorders.replace },
          log: silent,
          ...(options.calendars ? { calendars: options.calendars } : {}),
        };
        const noted = () => {
          for (const write of recorders.recording.writes) {
            writes.push(write);
            options.history.written(write);
          }
        };
        return { deps, noted };
      };
      /** The history up to `moment` appended and projected, and the clock at `moment`. */
      const reach = async (moment: Date) => {
        const batches = options.history.until(moment);
        for (const { at, batch } of batches) {
          await setScratchClock(pool, at);
          const identified = batch.map((append) => ({
            ...append,
            events: append.events.map((event) => {
              const id = event.id ?? randomUUID();
              given.add(id);
              return { ...event, id };
            }),
          }));
          await withTransaction(pool, (tx) => appendToStreams(tx, identified));
        }
        if (batches.length > 0) {
          await waitForProjection(pool, ENTRY_VERSIONS_PROJECTION, await store.head(), 60_000);
        }
        await setScratchClock(pool, moment);
      };
      const campaigns: { campaignId: string; items: number }[] = [];
      const plans = [...options.plans].sort((a, b) => a.at.getTime() - b.at.getTime());
      for (const plan of plans.filter((p) => p.at.getTime() <= options.until.getTime())) {
        await reach(plan.at);
        // The history holds the directory: as capture's first import, which a start waits for.
        await pool.query(
          `INSERT INTO capture_checkpoints (source, position) VALUES ('past', '0')
             ON CONFLICT DO NOTHING`,
        );
        const started = await startCampaign(engine().deps, plan.definition, {
          as: plan.startedBy,
          campaignId: plan.campaignId,
        });
        const instances = await instancesOf(pool, plan.campaignId);
        await settleAll(engine().deps, [...instances.values()]);
        const items = (await store.readStream(reviewCampaignStream(plan.campaignId)))
          .filter((event) => event.type === "ReviewItemsListed")
          .flatMap((event) => (event.data as { items: ReviewItem[] }).items);
        campaigns.push({ campaignId: plan.campaignId, items: items.length });
        const decisions = plan
          .decide(items)
          .filter((d) => d.at.getTime() <= options.until.getTime() && d.at >= plan.at);
        const byMoment = Map.groupBy(
          decisions.sort((a, b) => a.at.getTime() - b.at.getTime()),
          (d) => d.at.getTime(),
        );
        for (const [moment, together] of byMoment) {
          await reach(new Date(moment));
          const { deps, noted } = engine();
          // A reviewer's decisions of one moment are one bulk decision, as the review view's.
          for (const mine of Map.groupBy(together, (d) => d.as.accountId).values()) {
            const outcomes = await decideItems(
              deps,
              plan.campaignId,
              mine.map((d) => ({ itemId: d.itemId, decision: d.decision, reason: d.reason })),
              mine[0]!.as,
            );
            for (const outcome of outcomes.filter((o) => o.error)) {
              options.log?.warn(
                { campaignId: plan.campaignId, itemId: outcome.itemId, error: outcome.error },
                "a past review decision was refused",
              );
            }
            await settleAll(
              deps,
              outcomes.flatMap((o) => (o.instanceId ? [o.instanceId] : [])),
            );
          }
          noted();
        }
        // Past the deadline, the items nobody decided become what the definition says.
        const deadline = new Date(started.deadline);
        if (deadline.getTime() <= options.until.getTime()) {
          await reach(deadline);
          await pool.query("DELETE FROM workflow_timers WHERE due_at <= $1", [deadline]);
          const { deps, noted } = engine();
          await settleAll(deps, [...instances.values()]);
          noted();
        }
      }
      return {
        events: (await scratchEvents(pool)).filter(({ event }) => !given.has(event.id!)),
        writes,
        timers: await waitingTimers(pool),
        historyIds: await positionsOf(pool, given),
        campaigns,
      };
    } finally {
      await jobs.stop();
      await projector.stop();
    }
  } finally {
    scratch.drop().catch((error: unknown) => {
      options.log?.warn(
        { err: error },
        "a scratch database of the demo's past reviews could not be dropped",
      );
    });
  }
}

/** Settles the instances, a few at a time (each its own stream: they do not contend). */
async function settleAll(deps: EngineDeps, instanceIds: readonly string[]): Promise<void> {
  const queue = [...instanceIds];
  const worker = async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) await settle(deps, id);
  };
  await Promise.all(Array.from({ length: 4 }, worker));
}

/** Each item's instance, by the key its start was made idempotent with. */
async function instancesOf(pool: Pool, campaignId: string): Promise<Map<string, string>> {
  const prefix = `workflow-start:review:${campaignId}:`;
  const { rows } = await pool.query<{ key: string; instance_id: string }>(
    `SELECT idempotency_key AS key, data->>'instanceId' AS instance_id FROM events
      WHERE idempotency_key LIKE $1 || '%'`,
    [prefix],
  );
  return new Map(rows.map((row) => [row.key.slice(prefix.length), row.instance_id]));
}

/** The timers of the instances that have not ended. */
async function waitingTimers(pool: Pool): Promise<EnactedReviews["timers"]> {
  const { rows } = await pool.query<{ instance_id: string; due_at: Date; reason: string }>(
    "SELECT instance_id, due_at, reason FROM workflow_timers ORDER BY due_at",
  );
  const waiting: EnactedReviews["timers"][number][] = [];
  for (const row of rows) {
    const state = await loadInstance(pool, row.instance_id);
    if (state && !FINAL.has(state.status)) {
      waiting.push({ instanceId: row.instance_id, dueAt: row.due_at, reason: row.reason });
    }
  }
  return waiting;
}

async function positionsOf(pool: Pool, ids: ReadonlySet<string>): Promise<Map<number, string>> {
  const { rows } = await pool.query<{ id: string; position: string }>(
    "SELECT id::text AS id, position::text AS position FROM events WHERE id = ANY($1::uuid[])",
    [[...ids]],
  );
  return new Map(rows.map((row) => [Number(row.position), row.id]));
}

/** Every event in the scratch log, in log order, with its idempotency key. */
async function scratchEvents(pool: Pool): Promise<EnactedEvent[]> {
  const result = await pool.query<{
    id: string;
    stream_id: string;
    type: string;
    data: unknown;
    metadata: Record<string, unknown>;
    occurred_at: Date;
    idempotency_key: string | null;
  }>(
    `SELECT e.id::text AS id, e.stream_id, e.type, e.data, e.metadata, e.occurred_at,
            e.idempotency_key
       FROM events AS e ORDER BY ${logOrder("e")}`,
  );
  return result.rows.map((row) => ({
    streamId: row.stream_id,
    event: {
      id: row.id,
      type: row.type,
      data: row.data,
      metadata: row.metadata,
      occurredAt: row.occurred_at,
      ...(row.idempotency_key ? { idempotencyKey: row.idempotency_key } : {}),
    },
  }));
}
