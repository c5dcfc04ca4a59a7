import type { Operation } from "rfc6902";
import { ERASED_VALUE, type AttributeMap, type EntryState } from "../../events/index.ts";

/**
 * Redacts the values of the attributes `names` (lower case) in an entry event's data wherever
 * the entry event types hold them: in states (`state`, `before`, `after`) and in the patch.
 * Each value becomes `ERASED_VALUE`, so how many there were stays; names, DNs and operational
 * attributes stay. Returns the new data, or undefined when nothing in it changed.
 */
export function redactEntryEvent(
  data: Record<string, unknown>,
  names: ReadonlySet<string>,
): Record<string, unknown> | undefined {
  let changed = false;
  const redactState = (state: EntryState | null | undefined): EntryState | null | undefined => {
    if (!state) return state;
    const attributes: AttributeMap = {};
    for (const [name, values] of Object.entries(state.attributes)) {
      const erase = names.has(name.toLowerCase()) && values.some((v) => v !== ERASED_VALUE);
      changed ||= erase;
      attributes[name] = erase ? values.map(() => ERASED_VALUE) : values;
    }
    return { ...state, attributes };
  };
  const result: Record<string, unknown> = { ...data };
  for (const key of ["state", "before", "after"]) {
    if (key in result) result[key] = redactState(result[key] as EntryState | null);
  }
  if (Array.isArray(result.patch)) {
    result.patch = (result.patch as Operation[]).map((op) => {
      const name = (op.path.split("/")[1] ?? "").toLowerCase();
      if (!names.has(name) || !("value" in op)) return op;
      const value = Array.isArray(op.value) ? op.value.map(() => ERASED_VALUE) : ERASED_VALUE;
      if (JSON.stringify(value) === JSON.stringify(op.value)) return op;
      changed = true;
      return { ...op, value } as Operation;
    });
  }
  return changed ? result : undefined;
}

/** Every user attribute name (lower case) the events' states hold, `objectClass` aside. */
export function attributeNamesOf(datas: readonly Record<string, unknown>[]): Set<string> {
  const names = new Set<string>();
  for (const data of datas) {
    for (const key of ["state", "before", "after"]) {
      const state = data[key] as EntryState | null | undefined;
      for (const name of Object.keys(state?.attributes ?? {})) names.add(name.toLowerCase());
    }
  }
  names.delete("objectclass");
  return names;
}
