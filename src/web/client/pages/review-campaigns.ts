import { gql, query } from "../api.ts";
import { errorBox, fill, h, link, time } from "../dom.ts";
import { personView } from "../names.ts";
import type { PageContext } from "../router.ts";
import {
  CAMPAIGN_FIELDS,
  plural,
  principalView,
  type CampaignNode,
  type Progress,
} from "./reviews.ts";

/**
 * The access review campaigns' pages (`/app/reviews`, `/app/reviews/:id`): each campaign's
 * progress, its counters and a table by reviewer. The reviewer's items are in reviews.ts.
 */

/** The counters of a campaign's progress, the decided share as a bar. */
function progressView(progress: Progress): HTMLElement {
  const done = progress.decided + progress.undecided;
  const share = progress.total === 0 ? 0 : Math.round((100 * done) / progress.total);
  const counter = (name: string, value: number, cls = "") =>
    h(
      "div",
      { class: `counter ${cls}`, "data-counter": name },
      h("span", { class: "value" }, String(value)),
      h("span", { class: "name" }, name),
    );
  return h(
    "section",
    { class: "progress", "aria-label": "Progress" },
    // A <progress>: the page's policy allows no inline style to draw a bar's width.
    h("progress", {
      class: "bar",
      max: Math.max(progress.total, 1),
      value: done,
      "aria-label": "Items decided",
    }),
    h("p", { class: "meta" }, `${done} of ${plural(progress.total, "item")} decided (${share}%)`),
    h(
      "div",
      { class: "counters" },
      counter("open", progress.open),
      counter("decided", progress.decided),
      counter("overdue", progress.overdue, progress.overdue > 0 ? "bad" : ""),
      counter("escalated", progress.escalated, progress.escalated > 0 ? "warn" : ""),
      counter("kept", progress.kept),
      counter("revoked", progress.revoked),
      counter("undecided", progress.undecided),
      counter(
        "revocations failed",
        progress.revocationsFailed,
        progress.revocationsFailed > 0 ? "bad" : "",
      ),
    ),
  );
}

/** `/app/reviews`: the campaigns, the latest first, with their progress. */
export async function reviewsPage({ main }: PageContext): Promise<void> {
  fill(main, h("h1", null, "Access reviews"), h("p", { class: "loading" }, "Loading…"));
  let campaigns: CampaignNode[];
  try {
    campaigns = (
      await gql<{ reviewCampaigns: CampaignNode[] }>(`{ reviewCampaigns { ${CAMPAIGN_FIELDS} } }`)
    ).reviewCampaigns;
  } catch (error) {
    fill(main, h("h1", null, "Access reviews"), errorBox(error));
    return;
  }
  fill(
    main,
    h("h1", null, "Access reviews"),
    h(
      "p",
      null,
      "Each campaign asks the people responsible for groups to keep or revoke every membership. Your own open items are in the ",
      link("/app/inbox/reviews", "Inbox"),
      ".",
    ),
    campaigns.length === 0
      ? h("p", { id: "reviews-empty" }, "No access review has been started yet.")
      : h(
          "table",
          { class: "results campaigns", id: "campaigns" },
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              ...["Campaign", "Started", "Deadline", "Decided", "Open", "Overdue", "Revoked"].map(
                (c) => h("th", { scope: "col" }, c),
              ),
            ),
          ),
          h(
            "tbody",
            null,
            ...campaigns.map((c) => {
              const done = c.progress.decided + c.progress.undecided;
              const finished = c.progress.open === 0;
              return h(
                "tr",
                { "data-campaign": c.id },
                h(
                  "td",
                  null,
                  link(`/app/reviews/${encodeURIComponent(c.id)}`, c.title),
                  h(
                    "div",
                    { class: "meta" },
                    c.review,
                    finished ? h("span", { class: "state completed" }, "finished") : null,
                  ),
                ),
                h("td", null, time(c.startedAt)),
                h(
                  "td",
                  {
                    class:
                      !finished && new Date(c.deadline).getTime() <= Date.now()
                        ? "deadline passed"
                        : "",
                  },
                  time(c.deadline),
                ),
                h("td", { class: "num" }, `${done} of ${c.progress.total}`),
                h("td", { class: "num" }, String(c.progress.open)),
                h("td", { class: "num" }, String(c.progress.overdue)),
                h("td", { class: "num" }, String(c.progress.revoked)),
              );
            }),
          ),
        ),
  );
}

/** `/app/reviews/:id`: a campaign's progress: items open, decided, overdue, escalated; by reviewer. */
export async function reviewProgressPage({ main, params }: PageContext): Promise<void> {
  const crumbs = h("p", { class: "crumbs" }, link("/app/reviews", "Access reviews"), " › campaign");
  fill(main, crumbs, h("h1", null, "Campaign"), h("p", { class: "loading" }, "Loading…"));
  let campaign:
    | (CampaignNode & {
        unreviewable: { group: string; member: string }[];
        mine: { nodes: { id: string }[] };
      })
    | null;
  try {
    campaign = (
      await gql<{ reviewCampaign: typeof campaign }>(
        `query($id: ID!) { reviewCampaign(id: $id) { ${CAMPAIGN_FIELDS} unreviewable { group member }
           mine: items(mine: true, state: open, first: 1) { nodes { id } } } }`,
        { id: params.id },
      )
    ).reviewCampaign;
  } catch (error) {
    fill(main, crumbs, h("h1", null, "Campaign"), errorBox(error));
    return;
  }
  if (!campaign) {
    fill(main, crumbs, h("h1", null, "Not found"), h("p", null, "No campaign has this id."));
    return;
  }
  const { progress } = campaign;
  const finished = progress.open === 0;
  fill(
    main,
    crumbs,
    h("h1", null, campaign.title),
    h(
      "p",
      { class: "meta campaign-meta" },
      `${campaign.review} · started `,
      time(campaign.startedAt),
      " by ",
      personView(campaign.startedBy.dn, campaign.startedBy.name),
      " · ",
      h(
        "span",
        {
          class:
            !finished && new Date(campaign.deadline).getTime() <= Date.now()
              ? "deadline passed"
              : "deadline",
        },
        "due ",
        time(campaign.deadline),
      ),
      finished ? [" · ", h("span", { class: "state completed" }, "finished")] : null,
    ),
    campaign.mine.nodes.length > 0
      ? h(
          "p",
          null,
          link(`/app/inbox/reviews${query({ campaign: campaign.id })}`, "Decide your open items"),
        )
      : null,
    progressView(progress),
    h("h2", null, "By reviewer"),
    progress.byReviewer.length === 0
      ? h("p", null, "No reviewer has items in this campaign.")
      : h(
          "table",
          { class: "results by-reviewer", id: "by-reviewer" },
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              ...["Reviewer", "Open", "Decided", "Overdue"].map((c) =>
                h("th", { scope: "col" }, c),
              ),
            ),
          ),
          h(
            "tbody",
            null,
            ...progress.byReviewer.map((r) =>
              h(
                "tr",
                { "data-reviewer": r.reviewer },
                h("td", null, principalView(r.reviewer)),
                h("td", { class: "num" }, String(r.open)),
                h("td", { class: "num" }, String(r.decided)),
                h("td", { class: `num${r.overdue > 0 ? " error-text" : ""}` }, String(r.overdue)),
              ),
            ),
          ),
        ),
    campaign.unreviewable.length > 0
      ? [
          h("h2", null, "Unreviewable"),
          h(
            "p",
            { class: "hint" },
            "Members for whom the review found no reviewer and has no fallback: not items.",
          ),
          h(
            "ul",
            { class: "unreviewable" },
            ...campaign.unreviewable.map((u) =>
              h("li", null, personView(u.member), " in ", personView(u.group)),
            ),
          ),
        ]
      : null,
  );
}
