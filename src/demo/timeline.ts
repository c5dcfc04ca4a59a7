import { randomUUIDv7 } from "node:crypto";
import { changeBetween, formatGeneralizedTime } from "../capture/index.ts";
import { entryStream, type EntryState } from "../events/index.ts";
import type { StreamAppend } from "../store/index.ts";

/** Who made the demo's past changes: the directory's administrator, as HR's tools bind. */
export const HR = "cn=admin,dc=example,dc=org";

/** One change of the story: at a moment, to one entry. */
export interface Edit {
  readonly at: Date;
  readonly uuid: string;
  /** The entry's state after the edit, given its state before (null: absent). */
  readonly apply: (before: EntryState | null) => EntryState | null;
  /** The same backwards: the state before, given the state after. */
  readonly undo: (after: EntryState | null) => EntryState | null;
  readonly story: string;
  /** What the change's event says beyond the story (a step's write: its cause). */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** An event the engine recorded (a past request's, a past campaign's), with its moment. */
export interface PastEvent {
  readonly streamId: string;
  readonly event: {
    readonly id?: string;
    readonly type: string;
    readonly data: unknown;
    readonly metadata?: Readonly<Record<string, unknown>>;
    readonly occurredAt: Date;
    readonly idempotencyKey?: string;
  };
}

/** A batch of the past to append at its moment; `engine`: recorded by the engine. */
export interface PastBatch {
  readonly at: Date;
  readonly batch: StreamAppend[];
  readonly engine: boolean;
}

interface Entry {
  readonly at: Date;
  /** At one moment: the directory as it was first, then the engine's events, then edits. */
  readonly rank: 0 | 1 | 2;
  readonly seq: number;
  readonly make: () => StreamAppend[];
  readonly engine: boolean;
}

/**
 * The demo's past in the order of its moments, given out as a clock passes them (`until`):
 * the directory as it was at the start, the engine's events, and the story's edits, each
 * edit's event made from the entry's state when its moment comes. An edit added later (a past
 * campaign's revocation, as capture recorded it) joins at its moment. Every event has its id
 * from the start, so the same past appended twice (a scratch database's, the live log's) is
 * the same events.
 */
export class Timeline {
  readonly #current: Map<string, EntryState | null>;
  #pending: Entry[] = [];
  readonly #given: PastBatch[] = [];
  #seq = 0;

  constructor(initial: ReadonlyMap<string, EntryState | null>, start: Date) {
    this.#current = new Map(initial);
    this.#push(start, 0, false, () =>
      [...initial]
        .filter((entry): entry is [string, EntryState] => entry[1] !== null)
        .flatMap(([uuid, state]) =>
          eventsOf(uuid, null, state, start, "the directory 90 days ago"),
        ),
    );
  }

  /** The engine's events, each its own batch at its moment. */
  addEvents(events: readonly PastEvent[]): void {
    for (const { streamId, event } of events) {
      const metadata = { ...event.metadata, demo: true };
      this.#push(event.occurredAt, 1, true, () => [{ streamId, events: [{ ...event, metadata }] }]);
    }
  }

  addEdits(edits: readonly Edit[]): void {
    for (const edit of edits) {
      this.#push(edit.at, 2, false, () => {
        const before = this.#current.get(edit.uuid) ?? null;
        const after = edit.apply(before);
        this.#current.set(edit.uuid, after);
        return eventsOf(edit.uuid, before, after, edit.at, edit.story, edit.metadata);
      });
    }
  }

  /** The batches up to `moment` not given yet, in the order of their moments. */
  until(moment: Date): PastBatch[] {
    this.#pending.sort(
      (a, b) => a.at.getTime() - b.at.getTime() || a.rank - b.rank || a.seq - b.seq,
    );
    const due = this.#pending.filter((entry) => entry.at.getTime() <= moment.getTime());
    this.#pending = this.#pending.slice(due.length);
    const batches = due
      .map((entry) => ({ at: entry.at, batch: entry.make(), engine: entry.engine }))
      .filter((batch) => batch.batch.length > 0);
    this.#given.push(...batches);
    return batches;
  }

  /** Every batch, given or not, in the order of their moments (a stable sort). */
  all(): PastBatch[] {
    this.until(new Date(8.64e15));
    return [...this.#given].sort((a, b) => a.at.getTime() - b.at.getTime());
  }

  #push(at: Date, rank: Entry["rank"], engine: boolean, make: Entry["make"]): void {
    this.#pending.push({ at, rank, seq: this.#seq++, make, engine });
  }
}

function eventsOf(
  uuid: string,
  before: EntryState | null,
  after: EntryState | null,
  at: Date,
  story: string,
  metadata: Readonly<Record<string, unknown>> = {},
): StreamAppend[] {
  const stamped = after && stampedAt(after, at, before === null);
  const built = changeBetween(uuid, before, stamped);
  if (!built) return [];
  const { observed: _observed, ...change } = built.change;
  return [
    {
      streamId: entryStream(uuid),
      events: [
        {
          id: randomUUIDv7(),
          type: built.eventType,
          data: change,
          occurredAt: at,
          metadata: { actor: HR, ...metadata, source: "demo-history", demo: true, story },
        },
      ],
    },
  ];
}

/** The state with the operational timestamps of a change at `at`. */
function stampedAt(state: EntryState, at: Date, created: boolean): EntryState {
  const time = formatGeneralizedTime(at).replace(/\.\d+Z$/, "Z");
  return {
    ...state,
    operational: {
      ...state.operational,
      modifyTimestamp: [time],
      ...(created ? { createTimestamp: [time] } : {}),
    },
  };
}

/** A member added to (or removed from) a group. */
export function membership(
  group: string,
  member: string,
  change: "add" | "remove",
  at: Date,
  story: string,
): Edit {
  const add = (state: EntryState | null) =>
    withValues(state!, "member", [...(state!.attributes.member ?? []), member]);
  const remove = (state: EntryState | null) =>
    withValues(
      state!,
      "member",
      (state!.attributes.member ?? []).filter((dn) => dn.toLowerCase() !== member.toLowerCase()),
    );
  return change === "add"
    ? { at, uuid: group, apply: add, undo: remove, story }
    : { at, uuid: group, apply: remove, undo: add, story };
}

export function withValues(state: EntryState, attribute: string, values: string[]): EntryState {
  return { ...state, attributes: { ...state.attributes, [attribute]: values } };
}
