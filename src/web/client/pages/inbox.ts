import { gql } from "../api.ts";
import { announce, errorBox, fill, h, link, time } from "../dom.ts";
import { personView } from "../names.ts";
import type { PageContext } from "../router.ts";
import { schemaForm, type JsonSchema } from "../schema-form.ts";
import { ESCALATION_FIELDS, escalationView, type EscalationNode } from "../escalation.ts";
import { dataView, deadline } from "../workflow-data.ts";

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

/** `/app/inbox`: the viewer's open dialogs, oldest first, each with its form. */
export async function inboxPage({ main }: PageContext): Promise<void> {
  fill(main, h("h1", null, "Inbox"), h("p", { class: "loading" }, "Loading…"));
  let dialogs: DialogNode[];
  try {
    dialogs = (
      await gql<{ myDialogs: { nodes: DialogNode[] } }>(
        `{ myDialogs(first: 100) { nodes { ${DIALOG_FIELDS} } } }`,
      )
    ).myDialogs.nodes;
  } catch (error) {
    fill(main, h("h1", null, "Inbox"), errorBox(error));
    return;
  }
  fill(
    main,
    h("h1", null, "Inbox"),
    dialogs.length === 0
      ? h("p", { id: "inbox-empty" }, "Nothing waits for you.")
      : h(
          "ul",
          { class: "cards", id: "inbox" },
          ...dialogs.map((dialog) =>
            h("li", { class: "card", "data-dialog": dialog.id }, dialogCard(dialog)),
          ),
        ),
  );
  announce(`${dialogs.length} open ${dialogs.length === 1 ? "question" : "questions"}`);
}

function dialogCard(dialog: DialogNode): HTMLElement {
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
    dataView(dialog.data),
    dialog.escalation
      ? h(
          "details",
          { class: "escalation-box", open: true },
          h("summary", null, "Escalation"),
          escalationView(dialog.escalation, dialog),
        )
      : null,
    form.element,
    submit,
    result,
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
        fill(
          result,
          h(
            "p",
            { class: "ok", role: "status" },
            `Answered: the question is ${answered.completeDialog.state}.`,
          ),
        );
        element.classList.add("answered");
        for (const control of element.querySelectorAll("input, select, textarea, button"))
          (control as HTMLInputElement).disabled = true;
      } catch (error) {
        fill(result, errorBox(error));
        submit.disabled = false;
      }
    })();
  });
  return element;
}
