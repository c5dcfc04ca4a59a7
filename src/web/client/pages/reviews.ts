import { gql, query } from "../api.ts";
import { announce, errorBox, fill, h, link, time } from "../dom.ts";
import { personView } from "../names.ts";
import { navigate, type PageContext } from "../router.ts";

/**
 * Access reviews (docs/access-reviews.md) in the web application: the reviewer's items of a
 * campaign in the Inbox (`/app/inbox/reviews`), each with its membership's history, decided keep
 * or revoke one at a time or many at once; and the campaigns' progress (`/app/reviews`,
 * `/app/reviews/:id`).
 */

/** The built-in workflow whose dialogs are review items: the Inbox shows them here instead. */
export const REVIEW_WORKFLOW = "annal.review-item";

/** How often the review view reads again the revocations it shows that are not settled. */
export const REVOCATION_POLL_MS = 2000;

/** Items a page of the review view shows; more come a page at a time, when asked for. */
export const REVIEW_PAGE = 100;

interface Actor {
  name: string;
  dn: string | null;
}

export interface ReviewItemNode {
  id: string;
  group: string;
  member: string;
  accessFunction: string | null;
  since: string;
  heldDays: number;
  began: {
    kind: string;
    by: string | null;
    workflow: string | null;
    instanceId: string | null;
    position: number | null;
  };
  lastReview: { decision: string; decidedAt: string; by: string | null } | null;
  state: string;
  overdue: boolean;
  escalated: boolean;
  decision: string | null;
  reason: string | null;
  decidedBy: Actor | null;
  decidedAt: string | null;
  revocation: string | null;
  revocationError: { code: string; message: string } | null;
  directoryChange: { position: number } | null;
}

export interface Progress {
  total: number;
  open: number;
  decided: number;
  undecided: number;
  overdue: number;
  escalated: number;
  kept: number;
  revoked: number;
  revocationsFailed: number;
  byReviewer: { reviewer: string; open: number; decided: number; overdue: number }[];
}

export interface CampaignNode {
  id: string;
  review: string;
  title: string;
  startedAt: string;
  deadline: string;
  startedBy: Actor;
  progress: Progress;
}

const ITEM_FIELDS = `id group member accessFunction since heldDays
  began { kind by workflow instanceId position } lastReview { decision decidedAt by }
  state overdue escalated decision reason decidedBy { name dn } decidedAt
  revocation revocationError { code message } directoryChange { position }`;

export const PROGRESS_FIELDS = `progress { total open decided undecided overdue escalated kept revoked
  revocationsFailed byReviewer { reviewer open decided overdue } }`;

export const CAMPAIGN_FIELDS = `id review title startedAt deadline startedBy { name dn } ${PROGRESS_FIELDS}`;

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A principal an item is assigned to: a DN by name, an account or a service as it is. */
export function principalView(principal: string): HTMLElement {
  return principal.includes("=")
    ? personView(principal)
    : h("span", { class: "person" }, principal);
}

/** Who or what made a membership: the change's cause, in words. */
export function beganView(began: ReviewItemNode["began"]): HTMLElement {
  const by = began.by ? personView(began.by.includes("=") ? began.by : null, began.by) : null;
  const where =
    began.position === null
      ? null
      : h("span", { class: "position" }, ` (log position ${began.position})`);
  switch (began.kind) {
    case "import":
      return h("span", { class: "began import" }, "with the history’s first import", where);
    case "directory":
      return h(
        "span",
        { class: "began directory" },
        "added in the directory",
        by ? [" by ", by] : null,
        where,
      );
    case "workflow":
      return h(
        "span",
        { class: "began workflow" },
        "workflow ",
        began.instanceId
          ? link(
              `/app/instances/${encodeURIComponent(began.instanceId)}`,
              began.workflow ?? "instance",
            )
          : (began.workflow ?? ""),
        by ? [", approved by ", h("strong", { class: "approver" }, by)] : null,
        where,
      );
    case "mutation":
      return h(
        "span",
        { class: "began mutation" },
        "GraphQL mutation",
        by ? [" by ", by] : null,
        where,
      );
    case "changeEvent":
      return h(
        "span",
        { class: "began change-event" },
        "change event",
        by ? [" from ", by] : null,
        where,
      );
    default:
      return h("span", { class: "began event" }, `event ${began.kind}`, where);
  }
}

/** The last campaign's decision on the same membership, or that there was none. */
function lastReviewView(last: ReviewItemNode["lastReview"]): HTMLElement {
  if (!last) return h("span", { class: "last-review never" }, "never reviewed");
  return h(
    "span",
    { class: `last-review ${last.decision}` },
    h("strong", null, last.decision === "keep" ? "kept" : "revoked"),
    last.by ? [" by ", personView(last.by.includes("=") ? last.by : null, last.by)] : null,
    " on ",
    time(last.decidedAt),
  );
}

/** Where a revocation's directory write stands, as a badge. */
const REVOCATION_STATE: Readonly<Record<string, string>> = {
  pending: "waiting",
  retrying: "retrying",
  failed: "failed",
  done: "completed",
  gone: "completed",
};

/**
 * Whether a revocation's write may still change, or its captured change is still to come (a
 * page polls it until neither).
 */
export const revocationUnsettled = (item: ReviewItemNode) =>
  item.decision === "revoke" &&
  item.state === "decided" &&
  (item.revocation === null ||
    item.revocation === "pending" ||
    item.revocation === "retrying" ||
    // Written, and not yet recorded by capture: its log position comes.
    (item.revocation === "done" && item.directoryChange === null));

/** What became of a decided item: the decision, its reason, where its revocation stands. */
function outcomeView(item: ReviewItemNode): HTMLElement {
  const revocation = item.decision === "revoke" ? (item.revocation ?? "pending") : null;
  return h(
    "div",
    { class: `outcome ${item.decision ?? item.state}`, role: "status" },
    h(
      "p",
      null,
      h(
        "strong",
        null,
        item.state === "undecided" ? "Undecided" : item.decision === "keep" ? "Kept" : "Revoked",
      ),
      item.reason ? `: ${item.reason}` : null,
    ),
    item.decidedBy || item.decidedAt
      ? h(
          "p",
          { class: "meta" },
          item.decidedBy
            ? ["by ", personView(item.decidedBy.dn, item.decidedBy.name), " · "]
            : null,
          time(item.decidedAt),
        )
      : null,
    revocation
      ? h(
          "p",
          { class: "meta revocation" },
          "removal from the group: ",
          h("span", { class: `state ${REVOCATION_STATE[revocation] ?? "waiting"}` }, revocation),
          item.directoryChange
            ? [
                " · ",
                h("span", { class: "nowrap" }, `log position ${item.directoryChange.position}`),
              ]
            : null,
          item.revocationError
            ? h(
                "span",
                { class: "error-text" },
                ` ${item.revocationError.code}: ${item.revocationError.message}`,
              )
            : null,
        )
      : null,
  );
}

/** A campaign as the review view lists it: with the viewer's open items' groups. */
type InboxCampaign = CampaignNode & {
  mine: { nodes: { id: string; group: string }[]; pageInfo: { hasNextPage: boolean } };
};

/** What the review view's items are narrowed to (the query's `group`, `member`, `overdue`). */
interface ItemFilters {
  readonly group: string;
  readonly member: string;
  readonly overdue: boolean;
}

/** An item shown: its card, its box in the selection, and how an outcome changes it. */
interface ItemCard {
  item: ReviewItemNode;
  readonly box: HTMLInputElement;
  readonly row: HTMLElement;
  decided(item: ReviewItemNode): void;
  failed(error: unknown): void;
}

/** A decision of one item, as the mutation takes it. */
interface ItemDecision {
  readonly itemId: string;
  readonly decision: string;
  readonly reason: string;
}

/**
 * `/app/inbox/reviews`: the viewer's open items of a campaign (the latest with items for them
 * unless `campaign` names one), filtered by group, person and overdue; decided one at a time or
 * the selected ones at once.
 */
export async function reviewInboxPage(context: PageContext): Promise<void> {
  const { main, query: q } = context;
  const heading = h("h1", null, "Access review");
  const crumbs = h("p", { class: "crumbs" }, link("/app/inbox", "Inbox"), " › access review");
  fill(main, crumbs, heading, h("p", { class: "loading" }, "Loading…"));
  let campaigns: InboxCampaign[];
  try {
    campaigns = (
      await gql<{ reviewCampaigns: InboxCampaign[] }>(
        `{ reviewCampaigns { ${CAMPAIGN_FIELDS}
           mine: items(mine: true, state: open, first: 100) { nodes { id group } pageInfo { hasNextPage } } } }`,
      )
    ).reviewCampaigns;
  } catch (error) {
    fill(main, crumbs, heading, errorBox(error));
    return;
  }
  const wanted = q.get("campaign");
  const campaign =
    campaigns.find((c) => c.id === wanted) ??
    (wanted ? undefined : (campaigns.find((c) => c.mine.nodes.length > 0) ?? campaigns[0]));
  if (!campaign) {
    fill(
      main,
      crumbs,
      heading,
      h(
        "p",
        { id: "reviews-empty" },
        wanted
          ? "No campaign has this id."
          : "No access review has been started yet: nothing waits for you.",
      ),
    );
    return;
  }
  const filters: ItemFilters = {
    group: q.get("group") ?? "",
    member: q.get("member") ?? "",
    overdue: q.get("overdue") === "1",
  };
  const cards = new Map<string, ItemCard>();
  const status = h("div", { id: "review-status", "aria-live": "polite" });
  const follow = revocationFollower(context, campaign.id, cards);
  const decide = async (decisions: ItemDecision[]) => {
    await decideItems(campaign.id, decisions, cards, status);
    follow();
    bulk.update();
  };
  const bulk = bulkBar(cards, status, decide);
  const list = h("ol", { class: "review-items", id: "review-items" });
  const pages = itemPages(campaign.id, filters, {
    show: (item) => {
      const card = itemCard(item, decide, bulk.update);
      cards.set(item.id, card);
      list.append(card.row);
    },
    loaded: (shown) => {
      bulk.form.hidden = shown === 0;
      bulk.update();
    },
    failed: (error) => fill(status, errorBox(error)),
  });

  fill(
    main,
    crumbs,
    h("h1", null, campaign.title),
    campaignSummary(campaign),
    h(
      "p",
      { class: "hint" },
      "Each item is one membership: keep it if the person still needs it, revoke it otherwise (annal then removes them from the group, made as you). A revocation needs a reason; so may a keep.",
    ),
    reviewFilters(campaigns, campaign, filters),
    status,
    bulk.form,
    list,
    pages.empty,
    pages.more,
  );
  try {
    await pages.next();
  } catch (error) {
    fill(status, errorBox(error));
    return;
  }
  announce(`${plural(pages.shown, "open item")} shown`);
}

/** The filters: the campaign, a group of the viewer's open items, a person, overdue only. */
function reviewFilters(
  campaigns: readonly InboxCampaign[],
  campaign: InboxCampaign,
  filters: ItemFilters,
): HTMLFormElement {
  const campaignSelect = h(
    "select",
    { id: "r-campaign", name: "campaign" },
    ...campaigns.map((c) =>
      h(
        "option",
        { value: c.id, selected: c.id === campaign.id },
        `${c.title} (${c.mine.nodes.length}${c.mine.pageInfo.hasNextPage ? "+" : ""} open for you)`,
      ),
    ),
  );
  const groups = [
    ...new Set([
      ...campaign.mine.nodes.map((n) => n.group),
      ...(filters.group ? [filters.group] : []),
    ]),
  ].sort();
  const groupSelect = h(
    "select",
    { id: "r-group", name: "group" },
    h("option", { value: "" }, "any"),
    ...groups.map((g) =>
      h(
        "option",
        { value: g, selected: g.toLowerCase() === filters.group.toLowerCase() },
        groupName(g),
      ),
    ),
  );
  const memberInput = h("input", {
    id: "r-member",
    name: "member",
    value: filters.member,
    placeholder: "e.g. owojcik",
  });
  const overdueBox = h("input", {
    id: "r-overdue",
    name: "overdue",
    type: "checkbox",
    checked: filters.overdue,
  });
  const form = h(
    "form",
    { class: "filters review-filters", "aria-label": "Filter the items" },
    h(
      "div",
      { class: "field grow" },
      h("label", { for: "r-campaign" }, "Campaign"),
      campaignSelect,
    ),
    h("div", { class: "field" }, h("label", { for: "r-group" }, "Group"), groupSelect),
    h("div", { class: "field" }, h("label", { for: "r-member" }, "Person"), memberInput),
    h(
      "div",
      { class: "field checkbox" },
      overdueBox,
      h("label", { for: "r-overdue" }, "Overdue only"),
    ),
    h("button", { type: "submit" }, "Filter"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const other = campaignSelect.value !== campaign.id;
    navigate(
      `/app/inbox/reviews${query({
        campaign: campaignSelect.value,
        group: other ? undefined : groupSelect.value,
        member: memberInput.value.trim(),
        overdue: overdueBox.checked ? "1" : undefined,
      })}`,
    );
  });
  campaignSelect.addEventListener("change", () => form.requestSubmit());
  return form;
}

/** When the campaign started and by whom, its deadline, a link to its progress. */
function campaignSummary(campaign: InboxCampaign): HTMLElement {
  const deadlinePassed = new Date(campaign.deadline).getTime() <= Date.now();
  return h(
    "p",
    { class: "meta campaign-meta" },
    "Started ",
    time(campaign.startedAt),
    " by ",
    personView(campaign.startedBy.dn, campaign.startedBy.name),
    " · ",
    h(
      "span",
      { class: deadlinePassed ? "deadline passed" : "deadline" },
      "due ",
      time(campaign.deadline),
    ),
    " · ",
    link(`/app/reviews/${encodeURIComponent(campaign.id)}`, "the campaign’s progress"),
  );
}

/**
 * Bulk decisions: what is selected, one reason for all of them, keep or revoke. `update` sets
 * the bar after a change of the selection or of the cards (a decided card leaves it).
 */
function bulkBar(
  cards: ReadonlyMap<string, ItemCard>,
  status: HTMLElement,
  decide: (decisions: ItemDecision[]) => Promise<void>,
): { form: HTMLFormElement; update: () => void } {
  const selectAll = h("input", {
    id: "r-select-all",
    type: "checkbox",
    "aria-label": "Select every item shown",
  });
  const selectedCount = h("span", { id: "r-selected", class: "selected-count" }, "none selected");
  const reason = h("input", {
    id: "r-bulk-reason",
    name: "reason",
    autocomplete: "off",
    placeholder: "why, for every item selected",
  });
  const keep = h(
    "button",
    { type: "submit", name: "decision", value: "keep", disabled: true },
    "Keep selected",
  );
  const revoke = h(
    "button",
    { type: "submit", name: "decision", value: "revoke", class: "revoke", disabled: true },
    "Revoke selected",
  );
  const form = h(
    "form",
    { class: "review-bulk", id: "review-bulk", "aria-label": "Decide the selected items" },
    h(
      "div",
      { class: "field checkbox" },
      selectAll,
      h("label", { for: "r-select-all" }, "Select all"),
    ),
    selectedCount,
    h("div", { class: "field grow" }, h("label", { for: "r-bulk-reason" }, "Reason"), reason),
    keep,
    revoke,
  );
  const open = () => [...cards.values()].filter((c) => !c.box.disabled);
  const selected = () => open().filter((c) => c.box.checked);
  const update = () => {
    const n = selected().length;
    fill(selectedCount, n === 0 ? "none selected" : `${n} selected`);
    keep.disabled = n === 0;
    revoke.disabled = n === 0;
    const shown = open();
    selectAll.checked = shown.length > 0 && n === shown.length;
    selectAll.indeterminate = n > 0 && n < shown.length;
  };
  selectAll.addEventListener("change", () => {
    for (const card of open()) card.box.checked = selectAll.checked;
    update();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const decision =
      ((event as SubmitEvent).submitter as HTMLButtonElement | null)?.value ?? "keep";
    const chosen = selected();
    if (chosen.length === 0) return;
    keep.disabled = true;
    revoke.disabled = true;
    void decide(chosen.map((c) => ({ itemId: c.item.id, decision, reason: reason.value.trim() })))
      .then(() => {
        if (selected().length === 0) reason.value = "";
      })
      .catch((error: unknown) => fill(status, errorBox(error)))
      .finally(update);
  });
  return { form, update };
}

/**
 * A revocation is a directory write made after the decision (retried when it fails): while
 * one shown may still change, the page reads those items again every few seconds. The function
 * given back starts following (once; it stops when nothing shown is unsettled).
 */
function revocationFollower(
  context: PageContext,
  campaignId: string,
  cards: ReadonlyMap<string, ItemCard>,
): () => void {
  let following = false;
  return () => {
    if (following) return;
    following = true;
    const turn = async () => {
      const unsettled = [...cards.values()].filter((c) => revocationUnsettled(c.item));
      if (context.signal.aborted || unsettled.length === 0) {
        following = false;
        return;
      }
      try {
        const answer = await gql<{ reviewCampaign: { items: { nodes: ReviewItemNode[] } } | null }>(
          `query($id: ID!) { reviewCampaign(id: $id) { items(mine: true, state: decided, first: 500) { nodes { ${ITEM_FIELDS} } } } }`,
          { id: campaignId },
        );
        for (const item of answer.reviewCampaign?.items.nodes ?? []) {
          const card = cards.get(item.id);
          if (card && revocationUnsettled(card.item)) card.decided(item);
        }
      } catch {
        // The next turn asks again; the connection banner says when annal cannot be reached.
      }
      setTimeout(() => void turn(), REVOCATION_POLL_MS);
    };
    setTimeout(() => void turn(), REVOCATION_POLL_MS);
  };
}

/** Decides items at once; each outcome goes to its own card, a line in `status` sums them up. */
async function decideItems(
  campaignId: string,
  decisions: readonly ItemDecision[],
  cards: ReadonlyMap<string, ItemCard>,
  status: HTMLElement,
): Promise<void> {
  const answer = await gql<{
    decideReviewItems: {
      itemId: string;
      error: { code: string; message: string } | null;
      item: ReviewItemNode | null;
    }[];
  }>(
    `mutation($id: ID!, $d: [ReviewDecisionInput!]!) { decideReviewItems(campaignId: $id, decisions: $d) {
       itemId error { code message } item { ${ITEM_FIELDS} } } }`,
    {
      id: campaignId,
      d: decisions.map((d) => ({ ...d, reason: d.reason === "" ? null : d.reason })),
    },
  );
  let taken = 0;
  const refused: string[] = [];
  for (const outcome of answer.decideReviewItems) {
    const card = cards.get(outcome.itemId);
    if (outcome.error) {
      refused.push(outcome.error.code);
      card?.failed(outcome.error);
    } else {
      taken++;
      if (outcome.item) card?.decided(outcome.item);
    }
  }
  const verb = (decisions[0]?.decision ?? "keep") === "keep" ? "Kept" : "Revoked";
  fill(
    status,
    taken > 0
      ? h(
          "p",
          { class: "ok", role: "status" },
          `${verb} ${plural(taken, "item")}.`,
          refused.length > 0
            ? ` ${plural(refused.length, "decision")} refused: see the items marked below.`
            : "",
          " ",
          link(`/app/reviews/${encodeURIComponent(campaignId)}`, "See the campaign’s progress"),
        )
      : h(
          "div",
          { class: "error", role: "alert" },
          h("strong", null, refused[0] ?? "Error"),
          `: ${plural(refused.length, "decision")} refused: see the items marked below.`,
        ),
  );
  announce(`${taken} decided, ${refused.length} refused`);
}

/**
 * An item's card: who in which group (overdue, escalated), the membership's history, and its
 * own decision (a reason, keep or revoke); once decided, what became of it.
 */
function itemCard(
  item: ReviewItemNode,
  decide: (decisions: ItemDecision[]) => Promise<void>,
  selectionChanged: () => void,
): ItemCard {
  const box = h("input", {
    type: "checkbox",
    class: "select",
    "aria-label": `Select ${item.member} in ${item.group}`,
  });
  const reason = h("input", {
    class: "reason",
    name: "reason",
    autocomplete: "off",
    placeholder: "reason",
    "aria-label": "Reason",
  });
  const keep = h("button", { type: "submit", value: "keep" }, "Keep");
  const revoke = h("button", { type: "submit", value: "revoke", class: "revoke" }, "Revoke");
  const result = h("div", { class: "result", "aria-live": "polite" });
  const decideForm = h(
    "form",
    { class: "review-decide", "aria-label": "Decide this item" },
    h("div", { class: "decide-fields" }, reason, keep, revoke),
    result,
  );
  const row = h(
    "li",
    { class: `review-item${item.overdue ? " overdue" : ""}`, "data-item": item.id },
    h("div", { class: "pick" }, box),
    h("div", { class: "about" }, itemWho(item), itemHistory(item)),
    h("div", { class: "decide" }, decideForm),
  );
  const card: ItemCard = {
    item,
    box,
    row,
    decided: (now) => {
      card.item = now;
      box.checked = false;
      box.disabled = true;
      row.classList.add("decided");
      row.classList.remove("refused");
      fill(row.querySelector(".decide")!, outcomeView(now));
    },
    failed: (error) => {
      row.classList.add("refused");
      fill(result, errorBox(error));
    },
  };
  box.addEventListener("change", selectionChanged);
  decideForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const decision =
      ((event as SubmitEvent).submitter as HTMLButtonElement | null)?.value ?? "keep";
    keep.disabled = true;
    revoke.disabled = true;
    fill(result);
    void decide([{ itemId: item.id, decision, reason: reason.value.trim() }])
      .catch((error: unknown) => fill(result, errorBox(error)))
      .finally(() => {
        keep.disabled = false;
        revoke.disabled = false;
      });
  });
  if (item.state !== "open") card.decided(item);
  return card;
}

/** Who, in which group (and the access function it grants), flagged overdue or escalated. */
function itemWho(item: ReviewItemNode): HTMLElement {
  return h(
    "p",
    { class: "who" },
    h("span", { class: "member" }, personView(item.member)),
    " in ",
    h("span", { class: "group" }, personView(item.group)),
    item.accessFunction ? h("span", { class: "grant" }, ` (grants ${item.accessFunction})`) : null,
    item.overdue ? h("span", { class: "state failed" }, "overdue") : null,
    item.escalated ? h("span", { class: "state waiting" }, "escalated") : null,
  );
}

/** The membership's history: since when and how long, how it began, the last review. */
function itemHistory(item: ReviewItemNode): HTMLElement {
  return h(
    "dl",
    { class: "data history" },
    h("dt", null, "Member since"),
    h(
      "dd",
      { class: "since" },
      time(item.since),
      h("span", { class: "held" }, ` · held ${plural(item.heldDays, "day")}`),
    ),
    h("dt", null, "Began"),
    h("dd", null, beganView(item.began)),
    h("dt", null, "Last review"),
    h("dd", null, lastReviewView(item.lastReview)),
  );
}

/**
 * The viewer's open items of the campaign that match the filters, a page at a time: `next`
 * reads the next page and `show`s its items; `more` asks for it, `empty` says when none is.
 */
function itemPages(
  campaignId: string,
  filters: ItemFilters,
  on: {
    readonly show: (item: ReviewItemNode) => void;
    readonly loaded: (shown: number) => void;
    readonly failed: (error: unknown) => void;
  },
) {
  const more = h("button", { type: "button", id: "review-more", hidden: true }, "More items");
  const empty = h("p", { id: "review-empty", hidden: true });
  let after: string | null = null;
  const pages = {
    more,
    empty,
    shown: 0,
    async next(): Promise<void> {
      const { reviewCampaign } = await gql<{
        reviewCampaign: {
          items: {
            nodes: ReviewItemNode[];
            pageInfo: { hasNextPage: boolean; endCursor: string | null };
          };
        } | null;
      }>(
        `query($id: ID!, $group: String, $member: String, $overdue: Boolean, $first: Int, $after: String) {
           reviewCampaign(id: $id) { items(mine: true, state: open, group: $group, member: $member, overdue: $overdue, first: $first, after: $after) {
             nodes { ${ITEM_FIELDS} } pageInfo { hasNextPage endCursor } } } }`,
        {
          id: campaignId,
          group: filters.group || null,
          member: filters.member || null,
          overdue: filters.overdue ? true : null,
          first: REVIEW_PAGE,
          after,
        },
      );
      const page = reviewCampaign?.items ?? {
        nodes: [],
        pageInfo: { hasNextPage: false, endCursor: null },
      };
      for (const item of page.nodes) on.show(item);
      pages.shown += page.nodes.length;
      after = page.pageInfo.endCursor ?? after;
      more.hidden = !page.pageInfo.hasNextPage;
      const filtered = filters.group || filters.member || filters.overdue;
      empty.hidden = pages.shown > 0;
      fill(
        empty,
        filtered
          ? "None of your open items matches these filters."
          : "Nothing in this campaign waits for you.",
      );
      on.loaded(pages.shown);
    },
  };
  more.addEventListener("click", () => {
    more.disabled = true;
    void pages
      .next()
      .catch(on.failed)
      .finally(() => {
        more.disabled = false;
      });
  });
  return pages;
}

/** A group's short name: its DN's first value. */
function groupName(dn: string): string {
  const first = dn.split(/(?<!\\),/)[0] ?? dn;
  const equals = first.indexOf("=");
  return equals === -1 ? dn : first.slice(equals + 1);
}
