import {
  INSTANCE_EVENT_TYPES,
  eventsOfTypes,
  workflowStream,
  type InstanceEventType,
} from "../events/index.ts";
import type { Queryable } from "../db/index.ts";
import { readStream } from "../store/index.ts";
import {
  foldInstance,
  type InstanceEvent,
  type InstanceState,
} from "../../projections/workflows/index.ts";

const INSTANCE_TYPES: ReadonlySet<string> = new Set(INSTANCE_EVENT_TYPES);

/** An instance's events, folded; undefined when it has none. */
export async function loadInstance(
  db: Queryable,
  instanceId: string,
): Promise<InstanceState | undefined> {
  return foldInstance(await instanceEvents(db, instanceId));
}

/** An instance's events, in stream order (from `fromVersion`, 1 = the first). */
export async function instanceEvents(
  db: Queryable,
  instanceId: string,
  options: { readonly fromVersion?: number } = {},
): Promise<InstanceEvent[]> {
  const events = await readStream(db, workflowStream(instanceId), options);
  return eventsOfTypes<InstanceEventType>(events, INSTANCE_TYPES);
}
