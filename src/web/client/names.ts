import { query, rest } from "./api.ts";
import { h, rdnValue } from "./dom.ts";
import { dnKey } from "./dn.ts";
import { entryTypes } from "./types.ts";

/**
 * People and groups by name: a DN shown as its entry's display name (else its cn), the DN on
 * hover. Names are looked up in batches with the REST channel's search (one request per entry
 * type for every DN asked for in the same turn), and kept for the page's life.
 */

export { dnKey, looksLikeDn } from "./dn.ts";

const known = new Map<string, Promise<string | undefined>>();
let batch = new Map<string, (name: string | undefined) => void>();
let lookups = true;

/** Whether names may be looked up: the viewer must be allowed to read the directory. */
export function allowNameLookups(allowed: boolean): void {
  lookups = allowed;
}

/** RFC 4515: a value inside an LDAP filter. */
const escapeValue = (value: string) =>
  value.replace(/[*()\\\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, "0")}`);

/** `uid=krossi,ou=...` → `(uid=krossi)`; undefined for an RDN that is not `name=value`. */
function rdnFilter(dn: string): string | undefined {
  const match = /^\s*([A-Za-z][\w-]*)\s*=\s*((?:[^,+\\]|\\.)+?)\s*(?:,|$)/.exec(dn);
  if (!match) return undefined;
  const value = match[2]!.replace(/\\(.)/g, "$1");
  return `(${match[1]}=${escapeValue(value)})`;
}

/**
 * DNs per request: their filter stays far below the REST channel's 4,096 characters, and the
 * page (two entries a DN at most, say a person and a group of one name) below its page limit.
 */
const PER_REQUEST = 40;

async function lookUp(wanted: Map<string, (name: string | undefined) => void>): Promise<void> {
  const found = new Map<string, string>();
  try {
    const filters = [...new Set([...wanted.keys()].map(rdnFilter).filter((f) => f !== undefined))];
    const types = filters.length > 0 ? await entryTypes() : [];
    for (let start = 0; start < filters.length; start += PER_REQUEST) {
      const chunk = filters.slice(start, start + PER_REQUEST);
      const filter = chunk.length === 1 ? chunk[0]! : `(|${chunk.join("")})`;
      const pages = await Promise.all(
        types.map((type) =>
          rest<{ nodes: Record<string, unknown>[] }>(
            `/api/entries/${encodeURIComponent(type.segment)}${query({
              filter,
              fields: "displayName,cn",
              first: 2 * PER_REQUEST,
            })}`,
          ),
        ),
      );
      for (const node of pages.flatMap((page) => page.nodes)) {
        const name = first(node.displayName) ?? first(node.cn);
        if (typeof node.dn === "string" && name) found.set(dnKey(node.dn), name);
      }
    }
  } catch {
    // A name that cannot be looked up is shown as its DN's first value: nothing is lost.
  }
  for (const [key, resolve] of wanted) resolve(found.get(key));
}

const first = (value: unknown): string | undefined =>
  Array.isArray(value) ? (value[0] as string | undefined) : (value as string | undefined);

/** The display name of the entry at `dn`, or undefined when the directory has none for it. */
export function displayNameOf(dn: string): Promise<string | undefined> {
  const key = dnKey(dn);
  let name = known.get(key);
  if (!name) {
    if (!lookups) return Promise.resolve(undefined);
    name = new Promise((resolve) => {
      if (batch.size === 0) {
        setTimeout(() => {
          const wanted = batch;
          batch = new Map();
          void lookUp(wanted);
        }, 0);
      }
      batch.set(key, resolve);
    });
    known.set(key, name);
  }
  return name;
}

/**
 * A person (or group) by name: `fallback` (else the DN's first value) at once, the entry's
 * display name once looked up; the DN on hover and in `data-dn`.
 *
 * @example
 * personView("uid=krossi,ou=sales,ou=people,dc=example,dc=org", "krossi") // "Kateřina Rossi"
 */
export function personView(dn: string | null | undefined, fallback?: string): HTMLElement {
  if (!dn) return h("span", { class: "person" }, fallback ?? "—");
  const element = h(
    "span",
    { class: "person", title: dn, "data-dn": dn },
    fallback && !fallback.includes("=") ? fallback : rdnValue(dn),
  );
  void displayNameOf(dn).then((name) => {
    if (name) element.textContent = name;
    element.setAttribute("data-named", name ? "1" : "0");
  });
  return element;
}

/**
 * A DN that breaks between its parts, never inside a name: a break opportunity after each
 * unescaped comma, and the parts themselves kept whole by the stylesheet (`.dn`).
 */
export function dnView(dn: string): HTMLElement {
  const parts = dn.split(/(?<=(?<!\\),)/);
  const element = h("span", { class: "dn" });
  parts.forEach((part, index) => {
    if (index > 0) element.append(h("wbr"));
    element.append(part);
  });
  return element;
}
