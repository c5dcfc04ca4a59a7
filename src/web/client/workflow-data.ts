import { h, time } from "./dom.ts";
import { localizedView } from "./localized.ts";
import { looksLikeDn, personView } from "./names.ts";

/** `groupName` → `Group name`, `due_at` → `Due at`: a data key as a label. */
export function labelOf(key: string): string {
  const words = key
    .replace(/[_-]+/g, " ")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** `{ name, dn }` (how workflows name a person): the person by display name. */
const isPersonRef = (value: object): value is { name?: string; dn: string } =>
  typeof (value as { dn?: unknown }).dn === "string" &&
  Object.keys(value).every((key) => ["name", "dn", "accountId", "id"].includes(key));

function valueView(item: unknown): HTMLElement | string {
  if (item === null || item === undefined) return "—";
  if (typeof item === "string") return looksLikeDn(item) ? personView(item) : localizedView(item);
  if (typeof item === "boolean") return item ? "yes" : "no";
  if (typeof item === "number") return String(item);
  if (Array.isArray(item)) {
    return h("div", null, ...item.map((v) => h("div", { class: "value" }, valueView(v))));
  }
  if (isPersonRef(item)) return personView(item.dn, item.name);
  return dataView(item) ?? "";
}

/**
 * What a workflow shows with its question (or was started with), as a definition list: each
 * key as a label, people and groups by name with the DN on hover, nested objects as lists of
 * their own.
 */
export function dataView(data: unknown): HTMLElement | null {
  if (data === null || data === undefined) return null;
  if (typeof data === "object" && !Array.isArray(data)) {
    const entries = Object.entries(data as Record<string, unknown>);
    if (entries.length === 0) return h("p", { class: "hint" }, "None.");
    return h(
      "dl",
      { class: "data" },
      ...entries.flatMap(([key, item]) => [
        h("dt", { "data-key": key }, labelOf(key)),
        h("dd", null, valueView(item)),
      ]),
    );
  }
  return h("div", { class: "data" }, valueView(data));
}

/** A deadline still ahead or behind: the moment, and whether it has passed. */
export function deadline(until: string | null): HTMLElement | string {
  if (!until) return "no deadline";
  const passed = Date.parse(until) < Date.now();
  return h(
    "span",
    { class: passed ? "deadline passed" : "deadline" },
    passed ? "was due " : "due ",
    time(until),
  );
}
