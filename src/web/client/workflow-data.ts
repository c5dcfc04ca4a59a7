import { h, time } from "./dom.ts";
import { localizedView } from "./localized.ts";
import { looksLikeDn, namedKeys } from "./dn.ts";
import { personView } from "./names.ts";

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

/** People a page knows by their account name (`prossi`), with their DN: named by name. */
export type KnownPeople = ReadonlyMap<string, string | null>;

function valueView(item: unknown, people?: KnownPeople): HTMLElement | string {
  if (item === null || item === undefined) return "—";
  if (typeof item === "string") {
    if (looksLikeDn(item)) return personView(item);
    const dn = people?.get(item);
    return dn ? personView(dn, item) : localizedView(item);
  }
  if (typeof item === "boolean") return item ? "yes" : "no";
  if (typeof item === "number") return String(item);
  if (Array.isArray(item)) {
    return h("div", null, ...item.map((v) => h("div", { class: "value" }, valueView(v, people))));
  }
  if (isPersonRef(item)) return personView(item.dn, item.name);
  return dataView(item, people) ?? "";
}

/**
 * What a workflow shows with its question (or was started with), as a definition list: each
 * key as a label, people and groups by name with the DN on hover, nested objects as lists of
 * their own. A value that is the account name of one of `people` (a result's `decidedBy`) is
 * that person by display name.
 */
export function dataView(data: unknown, people?: KnownPeople): HTMLElement | null {
  if (data === null || data === undefined) return null;
  if (typeof data === "object" && !Array.isArray(data)) {
    const record = data as Record<string, unknown>;
    const { shown, names } = namedKeys(record);
    if (shown.length === 0) return h("p", { class: "hint" }, "None.");
    return h(
      "dl",
      { class: "data" },
      ...shown.flatMap((key) => [
        h("dt", { "data-key": key }, labelOf(key)),
        h(
          "dd",
          null,
          names.has(key)
            ? personView(String(record[key]), names.get(key))
            : valueView(record[key], people),
        ),
      ]),
    );
  }
  return h("div", { class: "data" }, valueView(data, people));
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
