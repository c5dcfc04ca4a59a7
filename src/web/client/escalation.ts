import { h, time, type Child } from "./dom.ts";
import { personView } from "./names.ts";
import { dataView } from "./workflow-data.ts";

/** A dialog's escalation chain as GraphQL's `Dialog.escalation` gives it. */
export interface EscalationNode {
  reached: number;
  levels: {
    at: string;
    mode: string;
    assignees: string[] | null;
    reachedAt: string | null;
    error: { code: string; message: string } | null;
  }[];
  final: { at: string; answer: unknown } | null;
}

export const ESCALATION_FIELDS = `escalation { reached levels { at mode assignees reachedAt error { code message } } final { at answer } }`;

/** A dialog's assignee: a person or group by name (DN on hover), or an account by its id. */
export function assigneeView(assignee: string): HTMLElement | string {
  if (assignee.startsWith("account:")) return `the account ${assignee.slice("account:".length)}`;
  return personView(assignee);
}

/** `a`, `a or b`, `a, b or c`. */
export const joinViews = (views: (HTMLElement | string)[], last = " or "): Child[] =>
  views.flatMap((view, index) =>
    index === 0 ? [view] : [index === views.length - 1 ? last : ", ", view],
  );

type LevelStatus = "passed" | "now" | "ahead" | "skipped";

const STATUS_WORDS: Record<LevelStatus, string> = {
  passed: "passed",
  now: "now",
  ahead: "ahead",
  skipped: "skipped",
};

/**
 * Where a dialog's chain stands: the opening, each level with its moment and whom it asked
 * (once it came; a level that found nobody says why), and the chain's end. The level standing
 * now is marked (`data-status="now"`); once the dialog is answered, the levels it did not
 * reach are `skipped`.
 */
export function escalationView(
  escalation: EscalationNode,
  dialog: { state: string; openedAt: string; endedAt?: string | null },
): HTMLElement {
  const pending = dialog.state === "pending";
  const status = (index: number): LevelStatus =>
    index < escalation.reached - 1
      ? "passed"
      : index === escalation.reached - 1
        ? pending
          ? "now"
          : "passed"
        : pending
          ? "ahead"
          : "skipped";
  const item = (level: LevelStatus, attributes: Record<string, string>, ...children: Child[]) =>
    h(
      "li",
      { class: `escalation-${level}`, "data-status": level, ...attributes },
      h("strong", { class: "escalation-status" }, STATUS_WORDS[level]),
      " ",
      h("span", { class: "escalation-what" }, ...children),
    );
  return h(
    "ol",
    { class: "escalation", "aria-label": "Escalation chain" },
    item(status(-1), { "data-level": "0" }, "opened ", time(dialog.openedAt)),
    ...escalation.levels.map((level, index) =>
      item(
        status(index),
        { "data-level": String(index + 1) },
        time(level.at),
        ": ",
        level.assignees === null
          ? level.mode === "add"
            ? "also asks whom the workflow finds then"
            : "asks whom the workflow finds then, instead"
          : [
              level.mode === "add" ? "also asks " : "asks ",
              ...joinViews(level.assignees.map(assigneeView), " and "),
            ],
        level.error
          ? h(
              "span",
              { class: "error-text" },
              ` (found nobody new: ${level.error.message}; the assignees stay)`,
            )
          : null,
      ),
    ),
    escalation.final
      ? item(
          pending
            ? "ahead"
            : dialog.endedAt && Date.parse(dialog.endedAt) >= Date.parse(escalation.final.at)
              ? "passed"
              : "skipped",
          { "data-level": "final" },
          time(escalation.final.at),
          escalation.final.answer === null
            ? ": the question times out"
            : [": the chain answers", dataView(escalation.final.answer)],
        )
      : null,
  );
}
