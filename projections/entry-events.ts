import {
  ENTRY_EVENT,
  type EntryChange,
  type EntrySnapshot,
  type EntryState,
} from "../src/directory/capture/events.ts";
import type { RecordedEvent } from "../src/store/index.ts";

export const ENTRY_EVENT_TYPES = Object.values(ENTRY_EVENT);

export { stateAfterEvent as stateAfter } from "../src/directory/capture/events.ts";

export function entryUUIDOf(event: RecordedEvent): string {
  return (event.data as EntryChange | EntrySnapshot).entryUUID;
}

/** The first value of an operational timestamp (`20261122043500Z`) as a Date, if any. */
export function operationalTime(state: EntryState | null, name: string): Date | undefined {
  const value = state?.operational[name]?.[0];
  const match = value && /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:[.,](\d+))?Z$/.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction] = match;
  const ms = fraction ? Math.round(Number(`0.${fraction}`) * 1000) : 0;
  return new Date(Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!, ms));
}
