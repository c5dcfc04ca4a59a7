import { query, rest } from "../api.ts";
import { actorView, causeView } from "../cause.ts";
import { announce, errorBox, fill, h, link, localInputValue, time } from "../dom.ts";
import { navigate, type PageContext } from "../router.ts";
import { memberChanges, memberChangesView } from "../member-changes.ts";
import { personView } from "../names.ts";
import { entryTypes, segmentOfType, type ChangeNode, type ChangePage } from "../types.ts";

/** How often an open feed asks for newer changes (polling the public REST channel). */
export const FEED_POLL_MS = 3000;

/** Changes a page of the feed shows; older ones come a page at a time, when asked for. */
export const FEED_PAGE = 25;

const CHANGE_TYPES = ["add", "modify", "modrdn", "delete"] as const;

/**
 * The attributes a change touched: a modify's by name; an add's or a delete's (every
 * attribute of the entry) counted, the names on hover.
 */
function attributesView(change: ChangeNode): HTMLElement {
  const names = change.attributes.join(", ");
  return change.type === "add" || change.type === "delete"
    ? h("span", { class: "attrs", title: names }, `${change.attributes.length} attributes`)
    : h("span", { class: "attrs" }, names);
}

/**
 * `/app/changes`: the global change feed, newest first, filtered by the entry's type, the kind
 * of change, an attribute, the actor and a moment. While open it polls `/api/changes` for
 * changes after the newest it shows and puts them on top.
 */
export async function feedPage({ main, query: q, signal }: PageContext): Promise<void> {
  const types = await entryTypes();
  const filters = {
    entryType: q.get("entryType") ?? "",
    type: q.get("type") ?? "",
    affects: q.get("affects") ?? "",
    actor: q.get("actor") ?? "",
    since: q.get("since") ?? "",
  };
  const entryType = h(
    "select",
    { id: "f-entry-type", name: "entryType" },
    h("option", { value: "" }, "any"),
    ...types.map((t) =>
      h("option", { value: t.segment, selected: t.segment === filters.entryType }, t.segment),
    ),
  );
  const changeType = h(
    "select",
    { id: "f-type", name: "type" },
    h("option", { value: "" }, "any"),
    ...CHANGE_TYPES.map((t) => h("option", { value: t, selected: t === filters.type }, t)),
  );
  const affects = h("input", {
    id: "f-affects",
    name: "affects",
    value: filters.affects,
    placeholder: "title, member, …",
  });
  const actor = h("input", {
    id: "f-actor",
    name: "actor",
    value: filters.actor,
    placeholder: "prossi or a DN",
  });
  const since = h("input", {
    id: "f-since",
    name: "since",
    type: "datetime-local",
    step: 1,
    value: filters.since ? localInputValue(new Date(filters.since)) : "",
  });
  const live = h("input", {
    id: "f-live",
    type: "checkbox",
    checked: true,
    "aria-describedby": "live-hint",
  });
  const form = h(
    "form",
    { class: "filters", "aria-label": "Filter the changes" },
    h("div", { class: "field" }, h("label", { for: "f-entry-type" }, "Entry type"), entryType),
    h("div", { class: "field" }, h("label", { for: "f-type" }, "Change"), changeType),
    h("div", { class: "field" }, h("label", { for: "f-affects" }, "Attribute"), affects),
    h("div", { class: "field" }, h("label", { for: "f-actor" }, "Actor"), actor),
    h("div", { class: "field" }, h("label", { for: "f-since" }, "Since"), since),
    h("button", { type: "submit" }, "Filter"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    navigate(
      `/app/changes${query({
        entryType: entryType.value,
        type: changeType.value,
        affects: affects.value.trim(),
        actor: actor.value.trim(),
        since: since.value ? new Date(since.value).toISOString() : undefined,
      })}`,
    );
  });
  const status = h("p", { class: "hint", id: "feed-status" });
  const list = h("ol", { class: "feed", id: "feed" });
  const older = h("button", { type: "button", id: "feed-older", hidden: true }, "Older changes");
  fill(
    main,
    h("h1", null, "Changes"),
    form,
    h("div", { class: "field checkbox" }, live, h("label", { for: "f-live" }, "Live")),
    h(
      "p",
      { class: "hint", id: "live-hint" },
      `While this page is open and Live is on, it asks annal for newer changes every ${FEED_POLL_MS / 1000} seconds.`,
    ),
    status,
    list,
    older,
  );

  const segments = new Map<string, string | undefined>();
  const segmentOf = async (typeName: string | null) => {
    const key = typeName ?? "";
    if (!segments.has(key)) segments.set(key, await segmentOfType(typeName));
    return segments.get(key);
  };

  const itemOf = async (change: ChangeNode) => {
    const segment = await segmentOf(change.entryType);
    const members = await memberChanges(change, segment).catch(() => undefined);
    // The entry by name, as its members are: its DN on hover.
    const entry = personView(change.dn);
    return h(
      "li",
      { class: `change ${change.type}`, "data-change": change.changeId },
      h("div", { class: "when" }, time(change.occurredAt)),
      h(
        "div",
        { class: "what" },
        h("span", { class: `kind ${change.type}` }, change.type),
        " ",
        segment ? link(`/app/directory/${segment}/${change.entryUUID}/history`, entry) : entry,
        change.attributes.length > 0 ? [" ", attributesView(change)] : null,
        members ? memberChangesView(members) : null,
      ),
      h("div", { class: "who" }, "by ", actorView(change.actor)),
      h("div", { class: "why" }, causeView(change.cause)),
    );
  };

  // Every filter is the server's: a page holds the latest matching changes, however rare.
  const restFilters = {
    entryType: filters.entryType || undefined,
    type: filters.type || undefined,
    affects: filters.affects || undefined,
    actor: filters.actor || undefined,
    since: filters.since || undefined,
  };
  let newest: string | null = null;
  let oldest: string | null = null;
  let shown = 0;
  const shownText = () =>
    `${shown} latest ${shown === 1 ? "change" : "changes"} shown${older.hidden ? "" : "; older ones below"}.`;
  /** A page of changes before `before` (the latest without), appended below the others. */
  const olderPage = async (before: string | null) => {
    const page = await rest<ChangePage>(
      `/api/changes${query({ ...restFilters, include: "nodes,patch,pageInfo", last: FEED_PAGE, before })}`,
    );
    if (before === null) newest = page.pageInfo?.endCursor ?? null;
    oldest = page.pageInfo?.startCursor ?? oldest;
    list.append(...(await Promise.all([...page.nodes].reverse().map(itemOf))));
    shown += page.nodes.length;
    older.hidden = !page.pageInfo?.hasPreviousPage;
    fill(status, shownText());
  };
  older.addEventListener("click", () => {
    older.disabled = true;
    void olderPage(oldest)
      .then(() => announce(`${shown} changes shown`))
      .catch((error: unknown) => fill(status, errorBox(error)))
      .finally(() => {
        older.disabled = false;
      });
  });
  try {
    await olderPage(null);
  } catch (error) {
    fill(status, errorBox(error));
    return;
  }

  const poll = async () => {
    if (signal.aborted) return;
    if (live.checked && document.visibilityState === "visible") {
      try {
        const page = await rest<ChangePage>(
          `/api/changes${query({ ...restFilters, include: "nodes,patch,pageInfo", first: 100, after: newest })}`,
        );
        newest = page.pageInfo?.endCursor ?? newest;
        let added = 0;
        for (const change of page.nodes) {
          const item = await itemOf(change);
          item.classList.add("new");
          list.prepend(item);
          added++;
        }
        if (added > 0) {
          shown += added;
          fill(status, `${shownText()} ${added} new at ${new Date().toLocaleTimeString()}.`);
          announce(`${added} new ${added === 1 ? "change" : "changes"}`);
        }
      } catch (error) {
        fill(status, errorBox(error));
      }
    }
    if (!signal.aborted) setTimeout(() => void poll(), FEED_POLL_MS);
  };
  setTimeout(() => void poll(), FEED_POLL_MS);
}
