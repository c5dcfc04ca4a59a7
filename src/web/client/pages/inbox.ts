import { gql } from "../api.ts";
import { announce, errorBox, fill, h, link, time } from "../dom.ts";
import { personView } from "../names.ts";
import type { PageContext } from "../router.ts";
import { schemaForm, type JsonSchema } from "../schema-form.ts";
import {
  assigneeView,
  ESCALATION_FIELDS,
  escalationView,
  joinViews,
  type EscalationNode,
} from "../escalation.ts";
import { dnKey } from "../names.ts";
import type { Viewer } from "../viewer.ts";
import { dataView, deadline } from "../workflow-data.ts";
import { REVIEW_WORKFLOW } from "./reviews.ts";

interface DialogNode {
  id: string;
  name: string;
  workflow: string;
  state: string;
  form: JsonSchema | null;
  data: unknown;
  until: string | null;
  openedAt: string;
  assignees: string[];
  instance: { id: string; startedBy: { name: string; dn: string | null } } | null;
  escalation: EscalationNode | null;
  delegatedBy: { name: string } | null;
}

const DIALOG_FIELDS = `id name workflow state form data until openedAt assignees delegatedBy { name } instance { id startedBy { name dn } } ${ESCALATION_FIELDS}`;

interface ReviewSummary {
  id: string;
  title: string;
  deadline: string;
  items: { nodes: { id: string; overdue: boolean }[]; pageInfo: { hasNextPage: boolean } };
}

/**
 * The access reviews with items waiting for the viewer: a line each, with how many and by when,
 * to the review view (their items are not questions among the others).
 */
function reviewsWaiting(campaigns: ReviewSummary[]): HTMLElement | null {
  const waiting = campaigns.filter((c) => c.items.nodes.length > 0);
  if (waiting.length === 0) return null;
  return h(
    "section",
    { class: "reviews-waiting", id: "reviews-waiting", "aria-label": "Access reviews" },
    h("h2", null, "Access reviews"),
    h(
      "ul",
      null,
      ...waiting.map((c) => {
        const n = c.items.nodes.length;
        const overdue = c.items.nodes.filter((item) => item.overdue).length;
        return h(
          "li",
          { "data-campaign": c.id },
          link(`/app/inbox/reviews?campaign=${encodeURIComponent(c.id)}`, c.title),
          `: ${n}${c.items.pageInfo.hasNextPage ? "+" : ""} ${n === 1 ? "membership waits" : "memberships wait"} for your decision, `,
          overdue > 0
            ? h("span", { class: "deadline passed" }, `${overdue} overdue`)
            : ["due ", time(c.deadline)],
        );
      }),
    ),
  );
}

/**
 * `/app/inbox`: the access reviews waiting for the viewer, then their other open dialogs,
 * oldest first, each with its form.
 */
export async function inboxPage({ main, viewer }: PageContext): Promise<void> {
  fill(main, h("h1", null, "Inbox"), h("p", { class: "loading" }, "Loading…"));
  let dialogs: DialogNode[];
  let reviews: HTMLElement | null;
  try {
    // Two requests: together they would pass the query cost limit.
    const [answered, campaigns] = await Promise.all([
      gql<{ myDialogs: { nodes: DialogNode[] } }>(
        `query($except: [String!]) { myDialogs(first: 100, exceptWorkflows: $except) { nodes { ${DIALOG_FIELDS} } } }`,
        { except: [REVIEW_WORKFLOW] },
      ),
      gql<{ reviewCampaigns: ReviewSummary[] }>(
        `{ reviewCampaigns { id title deadline items(mine: true, state: open, first: 100) { nodes { id overdue } pageInfo { hasNextPage } } } }`,
      ),
    ]);
    dialogs = answered.myDialogs.nodes;
    reviews = reviewsWaiting(campaigns.reviewCampaigns);
  } catch (error) {
    fill(main, h("h1", null, "Inbox"), errorBox(error));
    return;
  }
  const done = h("div", { id: "inbox-done", "aria-live": "polite" });
  const empty = () =>
    h(
      "p",
      { id: "inbox-empty" },
      reviews ? "No other question waits for you." : "Nothing waits for you.",
    );
  const list = h("ul", { class: "cards inbox", id: "inbox" });
  // An answered question leaves the inbox: its card goes, and a line above says so.
  const answered = (dialog: DialogNode, card: HTMLElement, state: string) => {
    fill(
      done,
      h(
        "p",
        { class: "ok", role: "status" },
        `Answered “${dialog.name}” of ${dialog.workflow}: the question is ${state}. `,
        dialog.instance ? link(`/app/instances/${dialog.instance.id}`, "Follow its instance") : "",
      ),
    );
    card.remove();
    if (list.childElementCount === 0) list.replaceWith(empty());
    announce(`Answered; ${list.childElementCount} open`);
  };
  list.append(
    ...dialogs.map((dialog) => {
      const card = h("li", { class: "card", "data-dialog": dialog.id });
      card.append(dialogCard(dialog, viewer, (state) => answered(dialog, card, state)));
      return card;
    }),
  );
  fill(
    main,
    h("h1", null, "Inbox"),
    reviews,
    reviews && dialogs.length > 0 ? h("h2", null, "Questions") : null,
    done,
    dialogs.length === 0 ? empty() : list,
  );
  announce(`${dialogs.length} open ${dialogs.length === 1 ? "question" : "questions"}`);
}

/**
 * Who is asked besides the viewer: each by name (a group as its name), the viewer as "you"
 * (by their DN, or a group of theirs, or a delegation), in the order the workflow gave.
 */
function askedView(dialog: DialogNode, viewer: Viewer): HTMLElement {
  const mine = new Set([viewer.dn, ...viewer.principals].filter(Boolean).map((p) => dnKey(p!)));
  const others = dialog.assignees.filter((a) => !mine.has(dnKey(a)));
  const you = dialog.assignees.length > others.length || dialog.delegatedBy !== null;
  if (others.length === 0) return h("p", { class: "meta asked" }, "asked: you alone");
  return h(
    "p",
    { class: "meta asked" },
    "asked: ",
    ...joinViews([...(you ? ["you"] : []), ...others.map(assigneeView)], " and "),
  );
}

function dialogCard(
  dialog: DialogNode,
  viewer: Viewer,
  onAnswered: (state: string) => void,
): HTMLElement {
  const form = schemaForm(dialog.form);
  const result = h("div", { class: "result", "aria-live": "polite" });
  const submit = h("button", { type: "submit" }, "Send answer");
  const element = h(
    "form",
    { class: "dialog", "aria-label": `${dialog.workflow}: ${dialog.name}` },
    h("h2", null, `${dialog.workflow}: ${dialog.name}`),
    dialog.delegatedBy
      ? h("p", { class: "meta delegated" }, `Delegated to you by ${dialog.delegatedBy.name}`)
      : "",
    h(
      "p",
      { class: "meta" },
      dialog.instance
        ? [
            "asked by ",
            h(
              "span",
              { class: "requester" },
              personView(dialog.instance.startedBy.dn, dialog.instance.startedBy.name),
            ),
            " in ",
            link(`/app/instances/${dialog.instance.id}`, "the instance"),
            " · ",
          ]
        : null,
      "opened ",
      time(dialog.openedAt),
      " · ",
      deadline(dialog.until),
    ),
    askedView(dialog, viewer),
    h(
      "div",
      { class: "dialog-body" },
      h(
        "div",
        { class: "dialog-about" },
        dataView(dialog.data),
        dialog.escalation
          ? h(
              "details",
              { class: "escalation-box", open: true },
              h("summary", null, "Escalation"),
              escalationView(dialog.escalation, dialog),
            )
          : null,
      ),
      h("div", { class: "dialog-answer" }, form.element, submit, result),
    ),
  );
  element.addEventListener("submit", (event) => {
    event.preventDefault();
    void (async () => {
      submit.disabled = true;
      try {
        const answered = await gql<{ completeDialog: { id: string; state: string } }>(
          `mutation($id: ID!, $answer: JSON!) { completeDialog(id: $id, answer: $answer) { id state } }`,
          { id: dialog.id, answer: form.value() },
        );
        onAnswered(answered.completeDialog.state);
      } catch (error) {
        fill(result, errorBox(error));
        submit.disabled = false;
      }
    })();
  });
  return element;
}
