import { ApiError, query, rest } from "../api.ts";
import { actorView, causeView } from "../cause.ts";
import { announce, errorBox, fill, formatMoment, h, link, time } from "../dom.ts";
import type { PageContext } from "../router.ts";
import { segmentOfType, type ChangeNode, type ChangePage } from "../types.ts";
import {
  attributesOfNode,
  diffAttributes,
  membershipIn,
  versionsOf,
  valueChanges,
  type AttributeDiff,
  type Attributes,
} from "../versions.ts";
import { localizedView } from "../localized.ts";
import { MEMBER_ATTRIBUTES, memberChangesView } from "../member-changes.ts";
import { dnView, looksLikeDn, personView } from "../names.ts";
import { versionPickers } from "../version-pickers.ts";
import { entryName } from "./directory.ts";

/** Timeline items drawn with the page, and then per animation frame (then versions offered). */
const FIRST_DRAWN = 30;
const CHUNK_DRAWN = 300;

/** `make`, called once: what it made is kept for every later call. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/** Every change of the entry, oldest first, a page of 1,000 at a time. */
async function allChanges(type: string, id: string): Promise<ChangeNode[]> {
  const changes: ChangeNode[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await rest<ChangePage>(
      `/api/entries/${encodeURIComponent(type)}/${encodeURIComponent(id)}/changes${query({
        include: "nodes,patch,pageInfo",
        first: 1000,
        after,
      })}`,
    );
    changes.push(...page.nodes);
    if (!page.pageInfo?.hasNextPage || !page.pageInfo.endCursor) return changes;
    after = page.pageInfo.endCursor;
  }
}

/**
 * The groups the entry was added to: the changes of `member` whose patch adds this DN, the
 * latest 1,000 of them, found by the server (`adds`). Membership is held by the groups; the
 * person's own entry does not change.
 */
async function memberships(dn: string): Promise<ChangeNode[]> {
  const page = await rest<ChangePage>(
    `/api/changes${query({ affects: "member", adds: dn, include: "nodes,patch", last: 1000 })}`,
  );
  return page.nodes.filter((change) => membershipIn(change.patch ?? [], "member", dn) === "added");
}

interface Loading {
  /** The entry's changes, and the entry now (its name and DN). */
  readonly data: Promise<readonly [ChangeNode[], Record<string, unknown> | undefined]>;
  /** The groups it joined, asked for once its DN is known. */
  readonly joined: Promise<ChangeNode[]>;
}

/** The history's requests, at once rather than one after the other. */
function load(type: string, id: string): Loading {
  const nowRequest = rest<Record<string, unknown>>(
    `/api/entries/${encodeURIComponent(type)}/${encodeURIComponent(id)}`,
  ).catch(() => undefined);
  const joined = nowRequest.then((node) =>
    node?.dn ? memberships(String(node.dn)).catch(() => []) : [],
  );
  const data = Promise.all([allChanges(type, id), nowRequest] as const);
  data.catch(() => undefined); // shown by the page that takes it
  return { data, joined };
}

/** What `prefetchHistory` asked for, taken once by the page it was asked for. */
const early = new Map<string, Loading>();

/** Starts loading a history before the viewer is known (the route's `prefetch`). */
export function prefetchHistory(params: Readonly<Record<string, string>>): void {
  const { type, id } = params as { type: string; id: string };
  early.set(`${type}/${id}`, load(type, id));
}

/** The attributes before the first change: none when it is the add, else the entry then. */
async function stateBefore(type: string, id: string, changes: ChangeNode[]): Promise<Attributes> {
  const firstChange = changes[0];
  if (!firstChange || firstChange.type === "add") return {};
  const before = new Date(Date.parse(firstChange.occurredAt) - 1).toISOString();
  try {
    const node = await rest<Record<string, unknown>>(
      `/api/entries/${encodeURIComponent(type)}/${encodeURIComponent(id)}${query({ at: before })}`,
    );
    return attributesOfNode(node);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return {};
    throw error;
  }
}

interface Version {
  readonly label: string;
  readonly attributes: Attributes;
}

function diffTable(a: Version, b: Version, onlyChanged: boolean): HTMLElement {
  const rows = diffAttributes(a.attributes, b.attributes).filter(
    (row) => !onlyChanged || row.kind !== "same",
  );
  const text = (v: string) =>
    v.length > 200
      ? `${v.slice(0, 200)}… (${v.length} characters)`
      : looksLikeDn(v)
        ? personView(v)
        : localizedView(v);
  const cell = (values: readonly string[], mark?: string, kept?: number) =>
    h(
      "td",
      null,
      ...values.map((v) => h("div", { class: mark ? `value ${mark}` : "value" }, text(v))),
      kept
        ? h("div", { class: "kept" }, `${kept} ${kept === 1 ? "value" : "values"} unchanged`)
        : null,
    );
  // A multi-valued attribute that changed shows what it lost and what it gained, not both
  // whole lists (a group's members): the values both versions hold are counted, not listed.
  const cells = (row: AttributeDiff) =>
    row.kind === "changed" && (row.before.length > 1 || row.after.length > 1)
      ? [cell(row.removedValues, "removed-value"), cell(row.addedValues, "added-value", row.kept)]
      : [cell(row.before), cell(row.after)];
  return h(
    "table",
    { class: "diff", id: "diff" },
    h("caption", null, `${a.label} → ${b.label}`),
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        h("th", { scope: "col" }, "Attribute"),
        h("th", { scope: "col" }, a.label),
        h("th", { scope: "col" }, b.label),
      ),
    ),
    h(
      "tbody",
      null,
      rows.length === 0 ? h("tr", null, h("td", { colspan: 3 }, "No attribute differs.")) : null,
      ...rows.map((row) =>
        h(
          "tr",
          { class: row.kind },
          h(
            "th",
            { scope: "row" },
            row.name,
            h("span", { class: "kind" }, row.kind === "same" ? "" : ` (${row.kind})`),
          ),
          ...cells(row),
        ),
      ),
    ),
  );
}

/**
 * `/app/directory/:type/:id/history`: every change of the entry as a timeline (when, who, what,
 * why), the groups it was added to, and a side-by-side diff of any two versions.
 */
export async function historyPage({ main, params, signal }: PageContext): Promise<void> {
  performance.mark("annal:history:start");
  const { type, id } = params as { type: string; id: string };
  const base = `/app/directory/${type}/${id}`;
  const heading = h("h1", { id: "entry-name" }, "History");
  fill(
    main,
    h("p", { class: "crumbs" }, link(`/app/directory${query({ type })}`, `Directory · ${type}`)),
    heading,
    h(
      "nav",
      { class: "tabs", "aria-label": "Entry" },
      link(base, "Entry"),
      h("a", { href: `${base}/history`, "aria-current": "page" }, "History"),
    ),
    h("p", { class: "loading" }, "Loading the history…"),
  );
  // The entry's changes and the entry now (its name and DN), asked for already when the
  // application opened on this page; then the groups it joined.
  const loading = early.get(`${type}/${id}`) ?? load(type, id);
  early.delete(`${type}/${id}`);
  let changes: ChangeNode[];
  let now: Record<string, unknown> | undefined;
  try {
    [changes, now] = await loading.data;
  } catch (error) {
    main.querySelector(".loading")?.replaceWith(errorBox(error));
    return;
  }
  const dn = String(now?.dn ?? changes.at(-1)?.dn ?? "");
  const name = now ? entryName(now) : dn;
  document.title = `History of ${name} · annal`;
  fill(heading, `History of ${name}`);
  // The groups it joined come last (their request waits for the entry's DN): what needs only
  // the changes is made while they are on their way.
  const joinedRequest = loading.joined.then((found) =>
    found.length > 0 || !dn || now?.dn ? found : memberships(dn).catch(() => []),
  );
  const before = await stateBefore(type, id, changes).catch(() => ({}));

  // Every version's attributes (the newest two are needed at once, and need every patch
  // before them); their labels are made as options and captions ask for them.
  const versions: Attributes[] = versionsOf(before, changes);
  const firstIndex = Object.keys(before).length > 0 ? 1 : 0;
  if (firstIndex === 1) versions.unshift(before);
  const versionAt = (index: number): Version | undefined => {
    const attributes = versions[index];
    if (!attributes) return undefined;
    const change = changes[index - firstIndex];
    return {
      label: change
        ? `#${index - firstIndex + 1} ${change.type} ${formatMoment(change.occurredAt)}`
        : "before the first change",
      attributes,
    };
  };

  // The diff: any two versions, the last two by default.
  const pickers = versionPickers(versions.length, (index) => versionAt(index)!.label);
  const { from: fromSelect, to: toSelect } = pickers;
  const onlyChanged = h("input", { id: "diff-only", type: "checkbox", checked: true });
  const diffHolder = h("div", { class: "diff-holder" });
  const drawDiff = () => {
    const a = versionAt(Number(fromSelect.value));
    const b = versionAt(Number(toSelect.value));
    if (a && b) fill(diffHolder, diffTable(a, b, onlyChanged.checked));
  };
  for (const control of [fromSelect, toSelect, onlyChanged])
    control.addEventListener("change", drawDiff);

  const compareWithPrevious = (index: number) => {
    pickers.addAll();
    fromSelect.value = String(Math.max(0, index - 1));
    toSelect.value = String(index);
    drawDiff();
    diffHolder.scrollIntoView({ block: "nearest" });
    (diffHolder.querySelector("table") as HTMLElement | null)?.focus();
  };

  // A group's change names the members it added and removed, from the versions around it.
  const membersOf = (index: number) => {
    const before = versions[index - 1];
    const after = versions[index];
    if (!before || !after) return null;
    const added: string[] = [];
    const removed: string[] = [];
    for (const name of Object.keys({ ...before, ...after })) {
      if (!MEMBER_ATTRIBUTES.has(name.toLowerCase())) continue;
      const found = valueChanges(before[name] ?? [], after[name] ?? []);
      added.push(...found.addedValues);
      removed.push(...found.removedValues);
    }
    return added.length + removed.length > 0 ? memberChangesView({ added, removed }) : null;
  };

  // Items are made when drawn: the newest first, the rest a chunk a frame (see below); the
  // newest changes' ahead of that, while the groups it joined are still asked for.
  type Item = { at: number; element: () => HTMLElement };
  const items: Item[] = changes.map((change, i) => ({
    at: Date.parse(change.occurredAt),
    element: once(() =>
      h(
        "li",
        { class: `change ${change.type}`, "data-change": change.changeId },
        h("div", { class: "when" }, time(change.occurredAt)),
        h(
          "div",
          { class: "what" },
          h("strong", null, change.type),
          change.attributes.length > 0 ? ` ${change.attributes.join(", ")}` : "",
          change.oldDn ? [" (renamed from ", dnView(change.oldDn), ")"] : "",
          change.type === "modify" ? membersOf(i + firstIndex) : null,
        ),
        h("div", { class: "who" }, "by ", actorView(change.actor)),
        h("div", { class: "why" }, "why: ", causeView(change.cause)),
        h(
          "div",
          { class: "actions" },
          link(`${base}${query({ at: change.occurredAt })}`, "The entry then"),
          i + firstIndex > 0
            ? h(
                "button",
                {
                  type: "button",
                  class: "link",
                  onclick: () => compareWithPrevious(i + firstIndex),
                },
                "Compare with the version before",
              )
            : null,
        ),
      ),
    ),
  }));
  if (versions.length >= 2) drawDiff();
  for (const item of items.slice(-FIRST_DRAWN)) item.element();
  const joined = await joinedRequest;
  const groups = joined.length > 0 ? await segmentOfType("group") : undefined;
  for (const change of joined) {
    items.push({
      at: Date.parse(change.occurredAt),
      element: () =>
        h(
          "li",
          { class: "change membership", "data-change": change.changeId },
          h("div", { class: "when" }, time(change.occurredAt)),
          h(
            "div",
            { class: "what" },
            h("strong", null, "added to group "),
            // The group by name (its cn), the DN on hover.
            groups
              ? link(`/app/directory/${groups}/${change.entryUUID}/history`, personView(change.dn))
              : personView(change.dn),
          ),
          h("div", { class: "who" }, "by ", actorView(change.actor)),
          h("div", { class: "why" }, "why: ", causeView(change.cause)),
        ),
    });
  }
  items.sort((a, b) => b.at - a.at);
  // A long history opens with its newest changes and the diff at once; the older ones follow,
  // a chunk per frame, so the page is usable before all of them are drawn.
  const timeline = h(
    "ol",
    { class: "timeline", id: "timeline", "aria-busy": "true" },
    ...items.slice(0, FIRST_DRAWN).map((item) => item.element()),
  );
  let drawn = Math.min(FIRST_DRAWN, items.length);
  const drawMore = () => {
    if (signal.aborted) return;
    if (drawn < items.length) {
      timeline.append(...items.slice(drawn, drawn + CHUNK_DRAWN).map((item) => item.element()));
      drawn = Math.min(drawn + CHUNK_DRAWN, items.length);
      requestAnimationFrame(drawMore);
    } else if (pickers.addOlder(CHUNK_DRAWN)) {
      requestAnimationFrame(drawMore);
    } else {
      timeline.removeAttribute("aria-busy");
      timeline.setAttribute("data-complete", "1");
      performance.mark("annal:history:complete");
    }
  };

  main.querySelector(".loading")?.remove();
  main.append(
    h(
      "section",
      { "aria-labelledby": "diff-heading", class: "compare" },
      h("h2", { id: "diff-heading" }, "Compare two versions"),
      versions.length < 2
        ? h("p", null, "There is only one version so far.")
        : [
            h(
              "div",
              { class: "diff-controls" },
              h("div", { class: "field" }, h("label", { for: "diff-from" }, "From"), fromSelect),
              h("div", { class: "field" }, h("label", { for: "diff-to" }, "To"), toSelect),
              h(
                "div",
                { class: "field checkbox" },
                onlyChanged,
                h("label", { for: "diff-only" }, "Only what differs"),
              ),
            ),
            diffHolder,
          ],
    ),
    h(
      "section",
      { "aria-labelledby": "timeline-heading" },
      h(
        "h2",
        { id: "timeline-heading" },
        `Timeline: ${changes.length} ${changes.length === 1 ? "change" : "changes"}${joined.length ? `, ${joined.length} group ${joined.length === 1 ? "membership" : "memberships"}` : ""}`,
      ),
      items.length === 0
        ? h("p", null, "No change recorded since annal first imported the entry.")
        : timeline,
    ),
  );
  performance.mark("annal:history:usable");
  // The rest once the first frame is drawn: a frame callback runs before its frame's layout,
  // so the one asked for from the first frame's callback is the second frame's.
  requestAnimationFrame(() => requestAnimationFrame(drawMore));
  announce(`${changes.length} changes`);
}
