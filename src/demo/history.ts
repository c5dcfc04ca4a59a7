/**
 * A past for the demo: on the first start, before the import of the demo directory, the log
 * is given 90 days of plausible history that ends exactly in the directory as it is. Every
 * entry was there 90 days ago, but for six people hired since (each added to their groups);
 * five people changed title, three moved from one group to another, one person left (deleted,
 * and taken out of her group). Given the deployed access request (`enact`), nine people asked
 * to join a group over those weeks (`requests.ts`): the requests are run by the real engine on
 * a moved clock, their events appended as it recorded them, and the memberships the approved
 * ones added are changes caused by the approving step, as capture would have recorded them.
 * Given the review too (`enactReviews`), two campaigns of the demo's quarterly review are run
 * over that past by annal's own start, decisions and item workflow (`reviews.ts`): last
 * quarter's, finished, whose two revocations are changes caused by the revoking steps (the
 * revoked held their membership from the start until then), and this quarter's, open.
 *
 * Each change is an event with its past `occurredAt`, marked `demo: true` and
 * `source: "demo-history"` in its metadata, and appended in the order of those moments, so
 * `at` a past moment, an entry's history and the change feed all have something to show on
 * the first start. The import's snapshots then follow, equal to the last seeded states.
 */
import { randomUUID } from "node:crypto";
import { entryState, stateIdentity, type CaptureContext } from "../capture/index.ts";
import { identityAttributes } from "../directory/index.ts";
import { withTransaction, type PoolClient } from "../db/index.ts";
import type { EntryState } from "../events/index.ts";
import type { DirectoryAt } from "../history/index.ts";
import { appendToStreams, type StreamAppend } from "../store/index.ts";
import { requestStory, type EnactPast, type EnactedWrite, type RequestPlan } from "./requests.ts";
import {
  reviewStory,
  type EnactedRevocation,
  type EnactReviews,
  type PlannedRevocation,
} from "./reviews.ts";
import { HR, membership, Timeline, withValues, type Edit } from "./timeline.ts";

const DAY = 24 * 3600 * 1000;

/**
 * Seeds the demo's past into the log (see the module's comment). Returns the events appended.
 * Called once, before the first import; the states it ends in are the directory's own.
 */
export async function seedDemoHistory(
  context: CaptureContext,
  now = new Date(),
  enact?: EnactPast,
  enactReviews?: EnactReviews,
): Promise<number> {
  const states = await currentStates(context);
  const taken = new Set<string>();
  const edits = demoStory(states, now, taken);
  const plans = enact ? requestStory(states, taken, now) : [];
  const enacted =
    enact && plans.length > 0
      ? await enact(plans, pastDirectory(withoutRequesters(before(states, edits), plans), edits))
      : undefined;
  edits.push(...(enacted?.writes ?? []).flatMap((write) => requestEdit(states, write)));
  const start = atHour(now, 90, 8, 0);
  const reviews = enactReviews ? reviewStory(states, taken, now, start) : undefined;
  const timeline = new Timeline(withRevoked(before(states, edits), reviews?.revoked ?? []), start);
  // The engine's events first: at one moment, the step that wrote comes before its change.
  timeline.addEvents(enacted?.events ?? []);
  timeline.addEdits(edits);
  const reviewed =
    enactReviews && reviews
      ? await enactReviews(reviews.plans, {
          until: (moment) => timeline.until(moment),
          written: (write) => timeline.addEdits(revocationEdit(states, write)),
        })
      : undefined;
  timeline.addEvents(reviewed?.events ?? []);
  const moments = timeline.all();
  return withTransaction(context.pool, async (tx) => {
    let appended = 0;
    for (const { batch, engine } of moments) {
      appended += await appendToStreams(
        tx,
        engine && reviewed ? await relocated(tx, batch, reviewed.historyIds) : batch,
      );
    }
    if (reviewed && reviewed.timers.length > 0) {
      // The open items' deadlines, as the engine set them when their dialogs opened.
      await tx.query(
        `INSERT INTO workflow_timers (instance_id, due_at, reason)
         SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[])`,
        [
          reviewed.timers.map((timer) => timer.instanceId),
          reviewed.timers.map((timer) => timer.dueAt),
          reviewed.timers.map((timer) => timer.reason),
        ],
      );
    }
    return appended;
  });
}

/**
 * The batch with every item's `began.position` (the log position of the change that made the
 * membership, as the campaign's start read it in the scratch log) turned into that change's
 * position in this log: the same event, by its id.
 */
async function relocated(
  tx: PoolClient,
  batch: StreamAppend[],
  historyIds: ReadonlyMap<number, string>,
): Promise<StreamAppend[]> {
  const ids = new Set<string>();
  const visit = (value: unknown, change: (position: number) => number | null): unknown => {
    if (Array.isArray(value)) return value.map((v) => visit(v, change));
    if (typeof value !== "object" || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, v]) => {
        const began = v as { position?: unknown } | null;
        if (key === "began" && typeof began?.position === "number") {
          return [key, { ...began, position: change(began.position) }];
        }
        return [key, visit(v, change)];
      }),
    );
  };
  visit(
    batch.map((append) => append.events.map((event) => event.data)),
    (position) => {
      const id = historyIds.get(position);
      if (id) ids.add(id);
      return position;
    },
  );
  if (ids.size === 0) return batch;
  const { rows } = await tx.query<{ id: string; position: string }>(
    "SELECT id::text AS id, position::text AS position FROM events WHERE id = ANY($1::uuid[])",
    [[...ids]],
  );
  const live = new Map(rows.map((row) => [row.id, Number(row.position)]));
  return batch.map((append) => ({
    ...append,
    events: append.events.map((event) => ({
      ...event,
      data: visit(event.data, (position) => live.get(historyIds.get(position) ?? "") ?? null),
    })),
  }));
}

/** The states with each revoked member in their group: the campaign's revocation removes them. */
function withRevoked(
  initial: Map<string, EntryState | null>,
  revoked: readonly PlannedRevocation[],
): Map<string, EntryState | null> {
  for (const { group, member } of revoked) {
    const found = [...initial].find(([, s]) => s?.dn.toLowerCase() === group.toLowerCase());
    if (!found) continue;
    initial.set(found[0], membership(found[0], member, "add", new Date(0), "").apply(found[1]));
  }
  return initial;
}

/** A member a campaign's revoking step removed, as capture records it: caused by that step. */
function revocationEdit(
  states: ReadonlyMap<string, EntryState>,
  enacted: EnactedRevocation,
): Edit[] {
  const { write } = enacted;
  const members = write.values?.member?.removed ?? [];
  const group = [...states].find(([, s]) => s.dn.toLowerCase() === write.dn.toLowerCase());
  if (write.operation !== "modify" || !group) return [];
  return members.map((member) => ({
    ...membership(
      group[0],
      member,
      "remove",
      new Date(Math.floor(Date.parse(write.at) / 1000) * 1000 + 1000),
      `access review: ${write.as ? nameOf(states, write.as) : "annal"} revoked ${nameOf(states, member)}'s membership of ${first(group[1], "cn")}`,
    ),
    metadata: {
      actor: write.as ?? HR,
      causationId: enacted.stepEvent,
      correlationId: enacted.instanceId,
    },
  }));
}

/** Back from today's states through every edit, newest first: the states 90 days ago. */
function before(
  states: ReadonlyMap<string, EntryState>,
  edits: readonly Edit[],
): Map<string, EntryState | null> {
  const initial = new Map<string, EntryState | null>(states);
  for (const edit of [...edits].sort((a, b) => b.at.getTime() - a.at.getTime())) {
    initial.set(edit.uuid, edit.undo(initial.get(edit.uuid) ?? null));
  }
  return initial;
}

/** The states with each requester out of the group they ask for: the approval adds them. */
function withoutRequesters(
  initial: Map<string, EntryState | null>,
  plans: readonly RequestPlan[],
): Map<string, EntryState | null> {
  for (const plan of plans) {
    const found = [...initial].find(
      ([, s]) =>
        s !== null && /,ou=groups,/i.test(s.dn) && first(s, "cn") === plan.parameters.group,
    );
    const member = plan.startedBy.dn;
    if (!found || !member) continue;
    initial.set(found[0], membership(found[0], member, "remove", plan.at, "").apply(found[1]));
  }
  return initial;
}

/** The directory at a past moment: the story's states up to it, for the requests' steps. */
function pastDirectory(
  initial: ReadonlyMap<string, EntryState | null>,
  edits: readonly Edit[],
): (at: Date) => Promise<DirectoryAt> {
  const sorted = [...edits].sort((a, b) => a.at.getTime() - b.at.getTime());
  return async (at) => {
    const states = new Map(initial);
    for (const edit of sorted) {
      if (edit.at.getTime() > at.getTime()) break;
      states.set(edit.uuid, edit.apply(states.get(edit.uuid) ?? null));
    }
    return {
      at,
      entries: [...states.values()]
        .filter((state): state is EntryState => state !== null)
        .map((state) => ({ dn: state.dn, attributes: state.attributes })),
      until: sorted.find((edit) => edit.at.getTime() > at.getTime())?.at ?? null,
    };
  };
}

/** A member a request's step added, as the story's change, caused by that step. */
function requestEdit(states: ReadonlyMap<string, EntryState>, enacted: EnactedWrite): Edit[] {
  const { write } = enacted;
  const members = write.values?.member?.added ?? [];
  const group = [...states].find(([, s]) => s.dn.toLowerCase() === write.dn.toLowerCase());
  if (write.operation !== "modify" || !group) return [];
  return members.map((member) => ({
    ...membership(
      group[0],
      member,
      "add",
      // As capture records it: slapd stamps whole seconds, and its change comes after the step.
      new Date(Math.floor(Date.parse(write.at) / 1000) * 1000 + 1000),
      `access request: ${nameOf(states, member)} asked for ${first(group[1], "cn")}, approved by ${write.as ? nameOf(states, write.as) : "its owner"}`,
    ),
    metadata: {
      actor: write.as ?? HR,
      causationId: enacted.stepEvent,
      correlationId: enacted.instanceId,
    },
  }));
}

/** Every entry under the base as capture records it, by entryUUID. */
async function currentStates(context: CaptureContext): Promise<Map<string, EntryState>> {
  const states = new Map<string, EntryState>();
  for await (const page of context.directory.search(context.base, {
    scope: "sub",
    attributes: ["*", "+", ...identityAttributes(context.normalizer.identity)],
    binaryAttributes: context.normalizer.schema.binaryAttributes(),
    pageSize: 500,
  })) {
    for (const entry of page) {
      const state = entryState(context.normalizer, entry);
      const uuid = stateIdentity(context.normalizer, state);
      if (uuid) states.set(uuid, state);
    }
  }
  return states;
}

/** The story's edits, chosen from today's entries so that it ends in them. */
function demoStory(states: ReadonlyMap<string, EntryState>, now: Date, taken: Set<string>): Edit[] {
  const entries = [...states].sort(([, a], [, b]) => a.dn.localeCompare(b.dn));
  const people = entries.filter(([, s]) => has(s, "objectClass", "inetOrgPerson"));
  const groups = entries.filter(
    ([, s]) => has(s, "objectClass", "groupOfNames") && /,ou=groups,/i.test(s.dn),
  );
  const groupsOf = (dn: string) => groups.filter(([, g]) => has(g, "member", dn));
  /** `count` of those that fit and are not in the story yet, spread over the directory. */
  const choose = (pool: typeof people, count: number, fits: (s: EntryState) => boolean) => {
    const fitting = pool.filter(([uuid, state]) => !taken.has(uuid) && fits(state));
    const step = Math.max(1, Math.floor(fitting.length / count));
    const chosen = fitting.filter((_, i) => i % step === step >> 1).slice(0, count);
    for (const [uuid] of chosen) taken.add(uuid);
    return chosen;
  };
  const edits: Edit[] = [];

  // Hires: added on their first day, then to their groups a few minutes later.
  const hired = choose(
    people,
    6,
    (s) => groupsOf(s.dn).length > 0 && !/^Head/.test(first(s, "title")),
  );
  hired.forEach(([uuid, person], i) => {
    const at = atHour(now, [72, 58, 41, 27, 13, 4][i]!, 9, 12);
    const name = first(person, "displayName");
    edits.push({ at, uuid, apply: () => person, undo: () => null, story: `${name} joined` });
    for (const [group] of groupsOf(person.dn)) {
      edits.push(membership(group, person.dn, "add", plus(at, 7), `${name} joined`));
    }
  });

  // Title changes: the title before is the title without its "Senior".
  const promoted = choose(people, 5, (s) => /^Senior /.test(first(s, "title")));
  promoted.forEach(([uuid, person], i) => {
    const title = first(person, "title");
    const previous = title.replace(/^Senior /, "");
    edits.push({
      at: atHour(now, [66, 49, 33, 19, 6][i]!, 14, 30),
      uuid,
      apply: (before) => withValues(before!, "title", [title]),
      undo: (after) => withValues(after!, "title", [previous]),
      story: `${first(person, "displayName")} became ${title}`,
    });
  });

  // Group moves: from a group they are not in today to one they are in.
  const moved = choose(people, 3, (s) => groupsOf(s.dn).length > 0);
  moved.forEach(([, person], i) => {
    const at = atHour(now, [54, 23, 8][i]!, 11, 5);
    const [to] = groupsOf(person.dn).at(-1)!;
    const from = groups.find(
      ([, g]) => !has(g, "member", person.dn) && g.dn !== states.get(to)!.dn,
    );
    if (from === undefined) return;
    const story = `${first(person, "displayName")} moved from ${first(from[1], "cn")} to ${first(states.get(to)!, "cn")}`;
    edits.push(membership(from[0], person.dn, "remove", at, story));
    edits.push(membership(to, person.dn, "add", at, story));
  });

  // A leaver: someone who is not in the directory today, modelled on a colleague.
  const model = people.find(([uuid, s]) => !taken.has(uuid) && groupsOf(s.dn).length > 0);
  if (model) {
    const leaverUuid = randomUUID();
    const leaverDn = model[1].dn.replace(/^uid=[^,]+/, "uid=mhartmann");
    const leaver: EntryState = {
      ...model[1],
      dn: leaverDn,
      attributes: {
        ...model[1].attributes,
        uid: ["mhartmann"],
        cn: ["Maren Hartmann"],
        sn: ["Hartmann"],
        givenName: ["Maren"],
        displayName: ["Maren Hartmann"],
        mail: ["mhartmann@example.org"],
      },
      operational: { ...model[1].operational, entryUUID: [leaverUuid] },
    };
    const at = atHour(now, 11, 17, 40);
    const story = "Maren Hartmann left";
    edits.push({ at, uuid: leaverUuid, apply: () => null, undo: () => leaver, story });
    const [group] = groupsOf(model[1].dn)[0]!;
    edits.push(membership(group, leaverDn, "remove", plus(at, 2), story));
  }

  return edits;
}

/** A person's display name, by DN (the DN itself for one not in the directory). */
function nameOf(states: ReadonlyMap<string, EntryState>, dn: string): string {
  const person = [...states.values()].find((s) => s.dn.toLowerCase() === dn.toLowerCase());
  return (person && first(person, "displayName")) || dn;
}

function has(state: EntryState, attribute: string, value: string): boolean {
  const wanted = value.toLowerCase();
  return (state.attributes[attribute] ?? []).some((v) => v.toLowerCase() === wanted);
}

function first(state: EntryState, attribute: string): string {
  return state.attributes[attribute]?.[0] ?? "";
}

/** `daysAgo` days before `now`, at the given time of day (UTC). */
function atHour(now: Date, daysAgo: number, hour: number, minute: number): Date {
  const day = new Date(now.getTime() - daysAgo * DAY);
  day.setUTCHours(hour, minute, 0, 0);
  return day;
}

function plus(at: Date, minutes: number): Date {
  return new Date(at.getTime() + minutes * 60_000);
}
