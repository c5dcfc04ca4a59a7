/** A small element builder: no framework, no innerHTML (text is always text). */
import { signInUrl } from "./api.ts";

export type Child = Node | string | number | null | undefined | false | readonly Child[];
type Props = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (child instanceof Node) parent.appendChild(child);
    else parent.appendChild(document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A link inside the application (the router takes the click). */
export function link(href: string, ...children: Child[]): HTMLAnchorElement {
  return h("a", { href }, ...children);
}

const FORMAT = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
});

/** A moment as text in the reader's locale (one formatter for the page: formatting is costly). */
export function formatMoment(iso: string | Date): string {
  return FORMAT.format(typeof iso === "string" ? new Date(iso) : iso);
}

/** A moment as a `<time>`: local time shown, ISO 8601 in `datetime` and the tooltip. */
export function time(iso: string | null | undefined): HTMLElement | string {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return h(
    "time",
    { datetime: date.toISOString(), title: date.toISOString() },
    FORMAT.format(date),
  );
}

/** A message for a screen reader's live region (results counts, saved answers). */
export function announce(message: string): void {
  const live = document.getElementById("live");
  if (live) live.textContent = message;
}

/** An error as a page shows it: the code, the message and the hint. */
export function errorBox(error: unknown): HTMLElement {
  const e = error as { code?: string; message?: string; hint?: string; signInAgain?: boolean };
  if (e.signInAgain) {
    // Not a fault of the page: the person's sign-in has to be renewed before they can act.
    return h(
      "div",
      { class: "error sign-in-again", role: "alert" },
      h("strong", null, "Please sign in again"),
      h("p", null, "annal could not confirm what you may do: ", e.message ?? ""),
      h("p", null, h("a", { href: signInUrl(), class: "button" }, "Sign in again")),
    );
  }
  return h(
    "div",
    { class: "error", role: "alert" },
    h("strong", null, e.code ?? "Error"),
    ": ",
    e.message ?? String(error),
    e.hint ? h("p", { class: "hint" }, "Hint: ", e.hint) : null,
  );
}

/** `uid=prossi,ou=people,...` → `prossi`: the value of a DN's first RDN, for short labels. */
export function rdnValue(dn: string | null | undefined): string {
  if (!dn) return "—";
  const first = dn.split(/(?<!\\),/)[0] ?? dn;
  const equals = first.indexOf("=");
  return equals === -1 ? dn : first.slice(equals + 1);
}

/** A `datetime-local` input's value for a moment, in local time. */
export function localInputValue(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}
