import { ApiError, query, rest } from "../api.ts";
import { announce, errorBox, fill, h, link, localInputValue, rdnValue, time } from "../dom.ts";
import { navigate, type PageContext } from "../router.ts";
import { localizedView } from "../localized.ts";
import { dnView, looksLikeDn, personView } from "../names.ts";
import { entryTypes } from "../types.ts";

type EntryNode = Record<string, unknown> & { id: string; entryUUID: string; dn: string };

/** RFC 4515: a value inside an LDAP filter. */
function escapeFilterValue(value: string): string {
  return value.replace(/[*()\\\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** What the search box means: a filter as written, or words matched against names. */
export function filterOf(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  if (trimmed.startsWith("(") || trimmed.startsWith("{") || /\s(eq|co|sw|pr)\s/.test(trimmed)) {
    return trimmed;
  }
  const v = escapeFilterValue(trimmed);
  return `(|(cn=*${v}*)(uid=*${v}*)(mail=*${v}*))`;
}

export const first = (value: unknown): string | undefined =>
  Array.isArray(value) ? (value[0] as string | undefined) : (value as string | undefined);

/** How an entry is named on a page: its display name, its cn, else its DN's first value. */
export function entryName(node: Record<string, unknown>): string {
  return String(first(node.displayName) ?? first(node.cn) ?? rdnValue(String(node.dn)));
}

/** Names of an entry type of people, as a configuration names it. */
const PEOPLE = /^(users?|persons?|people|employees?|staff|accounts?)$/i;

/**
 * The type the directory opens on: people, who are what a person looks for first; else the
 * first type configured.
 */
export function peopleFirst<T extends { segment: string; name: string }>(
  types: readonly T[],
): T | undefined {
  return types.find((t) => PEOPLE.test(t.name) || PEOPLE.test(t.segment)) ?? types[0];
}

/** `/app/directory`: search the entries of a type with the REST channel's filters. */
export async function directorySearch({ main, query: q }: PageContext): Promise<void> {
  const types = await entryTypes();
  const type = q.get("type") ?? peopleFirst(types)?.segment ?? "";
  const text = q.get("q") ?? "";
  const typeSelect = h(
    "select",
    { id: "search-type", name: "type" },
    ...types.map((t) => h("option", { value: t.segment, selected: t.segment === type }, t.segment)),
  );
  const input = h("input", {
    id: "search-text",
    name: "q",
    type: "search",
    value: text,
    placeholder: "a name, or a filter such as (title=*Engineer*)",
    "aria-describedby": "search-hint",
  });
  const results = h("section", { "aria-labelledby": "results-heading" });
  const form = h(
    "form",
    { class: "search", role: "search" },
    h("div", { class: "field" }, h("label", { for: "search-type" }, "Entry type"), typeSelect),
    h("div", { class: "field grow" }, h("label", { for: "search-text" }, "Search"), input),
    h("button", { type: "submit" }, "Search"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    navigate(`/app/directory${query({ type: typeSelect.value, q: input.value })}`);
  });
  fill(
    main,
    h("h1", null, "Directory"),
    form,
    h(
      "p",
      { class: "hint", id: "search-hint" },
      "Words match names, logins and mail; a filter in LDAP, JSON, expression or SCIM form is passed to the REST channel as written.",
    ),
    results,
  );
  if (!type) return;
  const filter = filterOf(text);
  try {
    const page = await rest<{ nodes: EntryNode[]; count?: number }>(
      `/api/entries/${encodeURIComponent(type)}${query({
        filter,
        first: 50,
        include: "nodes,count",
        sort: "cn",
      })}`,
    );
    fill(
      results,
      h("h2", { id: "results-heading" }, `${page.count ?? page.nodes.length} found`),
      page.nodes.length === 0
        ? h("p", null, "No entry matches.")
        : h(
            "table",
            { class: "results" },
            h(
              "thead",
              null,
              h(
                "tr",
                null,
                h("th", { scope: "col" }, "Name"),
                h("th", { scope: "col" }, "DN"),
                h("th", { scope: "col" }, "Title or description"),
              ),
            ),
            h(
              "tbody",
              null,
              ...page.nodes.map((node) =>
                h(
                  "tr",
                  null,
                  h("td", null, link(`/app/directory/${type}/${node.entryUUID}`, entryName(node))),
                  h("td", null, dnView(node.dn)),
                  h(
                    "td",
                    null,
                    localizedView(String(first(node.title) ?? first(node.description) ?? "")),
                  ),
                ),
              ),
            ),
          ),
    );
    announce(`${page.count ?? page.nodes.length} entries found`);
  } catch (error) {
    fill(results, errorBox(error));
  }
}

/** Every value of an attribute as text. */
const valuesOf = (value: unknown): string[] =>
  value === null || value === undefined
    ? []
    : Array.isArray(value)
      ? value.map(String)
      : [String(value)];

export function photoOf(node: Record<string, unknown>, name: string): HTMLElement | null {
  const photo = first(node.jpegPhoto);
  if (!photo) return null;
  return h("img", {
    class: "photo",
    src: `data:image/jpeg;base64,${photo}`,
    alt: `Photo of ${name}`,
  });
}

/**
 * A DN as the entry it names, by name, with the DN (broken between its parts) below; a
 * multi-language value in the viewer's language.
 */
const valueView = (value: string, attribute: string): HTMLElement | string =>
  !looksLikeDn(value)
    ? localizedView(value)
    : attribute === "dn"
      ? dnView(value)
      : h("span", { class: "named-dn" }, personView(value), dnView(value));

/** The attributes of an entry as a table; photos are shown above it, not as text. */
function attributeTable(node: Record<string, unknown>): HTMLElement {
  const names = Object.keys(node)
    .filter((name) => !["id", "type", "jpegPhoto"].includes(name))
    .sort((a, b) => a.localeCompare(b, "en", { sensitivity: "base" }));
  return h(
    "table",
    { class: "attributes" },
    h("caption", { class: "visually-hidden" }, "Attributes"),
    h(
      "tbody",
      null,
      ...names.map((name) =>
        h(
          "tr",
          null,
          h("th", { scope: "row" }, name),
          h(
            "td",
            null,
            ...valuesOf(node[name]).map((v) => h("div", { class: "value" }, valueView(v, name))),
          ),
        ),
      ),
    ),
  );
}

/** `/app/directory/:type/:id`: an entry now, or `at` a moment the person picks. */
export async function entryPage({ main, params, query: q }: PageContext): Promise<void> {
  const { type, id } = params as { type: string; id: string };
  const at = q.get("at") ?? undefined;
  const base = `/app/directory/${type}/${id}`;
  const picker = h("input", {
    id: "at",
    name: "at",
    type: "datetime-local",
    step: 1,
    value: at ? localInputValue(new Date(at)) : "",
    "aria-describedby": "at-hint",
  });
  const show = (moment: Date | undefined) =>
    navigate(`${base}${query({ at: moment?.toISOString() })}`);
  const form = h(
    "form",
    { class: "moment", "aria-label": "Moment" },
    h("div", { class: "field" }, h("label", { for: "at" }, "Show the entry as it was at"), picker),
    h("button", { type: "submit" }, "Show"),
    h(
      "button",
      { type: "button", id: "at-week", onclick: () => show(new Date(Date.now() - 7 * 86_400_000)) },
      "A week ago",
    ),
    h("button", { type: "button", id: "at-now", onclick: () => show(undefined) }, "Now"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    show(picker.value ? new Date(picker.value) : undefined);
  });
  const body = h("div", { class: "entry" });
  fill(
    main,
    h("p", { class: "crumbs" }, link(`/app/directory${query({ type })}`, `Directory · ${type}`)),
    h("h1", { id: "entry-name" }, "Entry"),
    h(
      "nav",
      { class: "tabs", "aria-label": "Entry" },
      h("a", { href: `${base}${query({ at })}`, "aria-current": "page" }, "Entry"),
      link(`${base}/history`, "History"),
    ),
    form,
    h(
      "p",
      { class: "hint", id: "at-hint" },
      "Your local time. Without a moment, the entry as it is now.",
    ),
    body,
  );
  try {
    const node = await rest<EntryNode>(
      `/api/entries/${encodeURIComponent(type)}/${encodeURIComponent(id)}${query({ at })}`,
    );
    const name = entryName(node);
    document.title = `${name} · annal`;
    fill(main.querySelector("#entry-name")!, name);
    fill(
      body,
      h("p", { class: "as-of", id: "as-of" }, at ? ["As it was at ", time(at)] : "As it is now"),
      h("div", { class: "entry-head" }, photoOf(node, name)),
      attributeTable(node),
    );
    announce(at ? `${name} as it was at ${new Date(at).toLocaleString()}` : `${name} now`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404 && at) {
      fill(
        body,
        h("p", { class: "as-of", id: "as-of" }, "Not in the directory at ", time(at)),
        errorBox(error),
      );
    } else fill(body, errorBox(error));
  }
}
