import { query, rest } from "./api.ts";
import { h } from "./dom.ts";
import { personView } from "./names.ts";
import type { ChangeNode } from "./types.ts";
import {
  applyPatch,
  attributesOfNode,
  pointerSegments,
  valueChanges,
  type PatchOperation,
} from "./versions.ts";

/** The attributes whose values name other entries, one by one: a group's members. */
export const MEMBER_ATTRIBUTES = new Set(["member", "uniquemember", "memberuid"]);

const onMembers = (operation: PatchOperation) =>
  MEMBER_ATTRIBUTES.has((pointerSegments(operation.path)[0] ?? "").toLowerCase());

/**
 * The members a modify added to a group and removed from it. A patch names the values it adds,
 * not the ones it removes (`remove /member/3`): for those the group as it was just before the
 * change is read (`at`, only the member attributes) and the patch applied to it.
 */
export async function memberChanges(
  change: ChangeNode,
  segment: string | undefined,
): Promise<{ added: string[]; removed: string[] } | undefined> {
  if (change.type !== "modify" || !change.patch) return undefined;
  const patch = change.patch.filter(onMembers);
  if (patch.length === 0) return undefined;
  const onlyAdds = patch.every(
    (operation) =>
      operation.op === "add" &&
      pointerSegments(operation.path).length === 2 &&
      typeof operation.value === "string",
  );
  if (onlyAdds) return { added: patch.map((operation) => String(operation.value)), removed: [] };
  if (!segment) return undefined;
  const names = [...new Set(patch.map((operation) => pointerSegments(operation.path)[0]!))];
  const before = attributesOfNode(
    await rest<Record<string, unknown>>(
      `/api/entries/${encodeURIComponent(segment)}/${encodeURIComponent(change.entryUUID)}${query({
        at: new Date(Date.parse(change.occurredAt) - 1).toISOString(),
        fields: names.join(","),
      })}`,
    ),
  );
  const after = applyPatch(before, patch);
  const added: string[] = [];
  const removed: string[] = [];
  for (const name of names) {
    const found = valueChanges(before[name] ?? [], after[name] ?? []);
    added.push(...found.addedValues);
    removed.push(...found.removedValues);
  }
  return { added, removed };
}

/** How many members a feed item names before it says how many more. */
const SHOWN = 5;

/** `added Kateřina Rossi`, `removed Lena Novak`: each by name, the DN on hover. */
export function memberChangesView(found: { added: string[]; removed: string[] }): HTMLElement {
  const items = [
    ...found.added.map((dn) => ({ dn, verb: "added" })),
    ...found.removed.map((dn) => ({ dn, verb: "removed" })),
  ];
  return h(
    "ul",
    { class: "members-changed" },
    ...items
      .slice(0, SHOWN)
      .map((item) =>
        h("li", { class: `member-${item.verb}` }, `${item.verb} member `, personView(item.dn)),
      ),
    items.length > SHOWN ? h("li", null, `and ${items.length - SHOWN} more`) : null,
  );
}
