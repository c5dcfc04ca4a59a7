import {
  ENTRY_EVENT,
  sameAttributes,
  stateAfterEvent,
  type EntryEventType,
  type EntryState,
  type RecordedOf,
  type StreamCheckpointed,
} from "../../events/index.ts";

/** What a checkpoint says of the events it replaces, before the run adds its own facts. */
export type FoldedStream = Pick<
  StreamCheckpointed,
  "entryUUID" | "state" | "lastType" | "since" | "created"
>;

interface OpenVersion {
  readonly validFrom: Date;
  readonly version: number;
  readonly position: number;
  readonly state: EntryState | null;
  /** The DN and type the version shows: a delete shows the entry's before it. */
  readonly dn: string;
  readonly type: string | null;
}

/**
 * Folds an entry's events (in stream order, a checkpoint of an earlier run possibly first)
 * into what its checkpoint holds: the state they leave, and what the projections took from
 * them, worked out as they work it out. `since` is the version `entry_versions` holds valid at
 * the end (a snapshot that found the entry unchanged starts none, and versions never start
 * before the one they follow); `created` is the event `entries` dates the entry from (the
 * first after its last delete).
 */
export function foldEntryStream(events: readonly RecordedOf<EntryEventType>[]): FoldedStream {
  const last = events.at(-1);
  if (!last) throw new Error("foldEntryStream needs at least one event");
  let open: OpenVersion | undefined;
  let created: FoldedStream["created"] = null;
  for (const event of events) {
    const state = stateAfterEvent(event);
    if (event.type === ENTRY_EVENT.checkpointed) {
      const { since } = event.data;
      open = {
        validFrom: new Date(since.occurredAt),
        version: since.version,
        position: since.position,
        state,
        dn: since.dn,
        type: since.type,
      };
      created = event.data.created;
      continue;
    }
    const deleted = event.type === ENTRY_EVENT.deleted || !state;
    created = deleted
      ? null
      : (created ?? { position: event.position, occurredAt: event.occurredAt.toISOString() });
    if (event.type === ENTRY_EVENT.snapshot && open?.state && state) {
      const same =
        open.state.dn === state.dn &&
        open.state.type === state.type &&
        sameAttributes(open.state.attributes, state.attributes);
      if (same) continue;
    }
    const validFrom = open && open.validFrom > event.occurredAt ? open.validFrom : event.occurredAt;
    open = {
      validFrom,
      version: event.streamVersion,
      position: event.position,
      state,
      dn: state?.dn ?? open?.dn ?? "",
      type: state ? state.type : (open?.type ?? null),
    };
  }
  return {
    entryUUID: last.data.entryUUID,
    state: stateAfterEvent(last),
    lastType: last.type === ENTRY_EVENT.checkpointed ? last.data.lastType : (last.type as string),
    since: {
      version: open!.version,
      occurredAt: open!.validFrom.toISOString(),
      position: open!.position,
      dn: open!.dn,
      type: open!.type,
    },
    created,
  };
}
