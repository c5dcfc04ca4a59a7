import { gql } from "../api.ts";
import { announce, errorBox, fill, h, time } from "../dom.ts";
import type { PageContext } from "../router.ts";

interface DelegationNode {
  id: string;
  state: string;
  from: string;
  until: string;
  delegator: { name: string };
  delegate: { name: string };
}

const FIELDS = `id state from until delegator { name } delegate { name }`;

/** `/app/delegations`: the viewer's delegations, given and received; make one, end one. */
export async function delegationsPage(context: PageContext): Promise<void> {
  const { main } = context;
  let mine: { given: DelegationNode[]; received: DelegationNode[] };
  try {
    mine = (
      await gql<{ myDelegations: typeof mine }>(
        `{ myDelegations { given { ${FIELDS} } received { ${FIELDS} } } }`,
      )
    ).myDelegations;
  } catch (error) {
    fill(main, h("h1", null, "Delegations"), errorBox(error));
    return;
  }
  const result = h("div", { class: "result", "aria-live": "polite" });
  const to = h("input", { name: "to", required: "", placeholder: "login, e.g. owojcik" });
  const from = h("input", { name: "from", placeholder: "now" });
  const until = h("input", { name: "until", required: "", placeholder: "now+7d or 2026-12-24" });
  const form = h(
    "form",
    { id: "delegate-form", class: "start" },
    h("label", null, "Delegate my dialogs to ", to),
    h("label", null, "from ", from),
    h("label", null, "until ", until),
    h("button", { type: "submit" }, "Delegate"),
    result,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void (async () => {
      try {
        await gql(
          `mutation($to: String!, $from: String, $until: String!) { delegateDialogs(to: $to, from: $from, until: $until) { id } }`,
          { to: to.value, from: from.value === "" ? null : from.value, until: until.value },
        );
        announce("Delegated");
        await delegationsPage(context);
      } catch (error) {
        fill(result, errorBox(error));
      }
    })();
  });
  const rows = (list: DelegationNode[], given: boolean) =>
    list.length === 0
      ? h("p", null, given ? "You have delegated nothing." : "Nobody delegated to you.")
      : h(
          "table",
          { id: given ? "given" : "received" },
          h(
            "tr",
            null,
            h("th", null, given ? "To" : "From"),
            h("th", null, "Period"),
            h("th", null, "State"),
            h("th", null, ""),
          ),
          ...list.map((d) => {
            const end = h("button", { type: "button", class: "link" }, "End now");
            end.addEventListener("click", () => {
              void (async () => {
                try {
                  await gql(`mutation($id: ID!) { endDelegation(id: $id) { id } }`, { id: d.id });
                  announce("Delegation ended");
                  await delegationsPage(context);
                } catch (error) {
                  fill(result, errorBox(error));
                }
              })();
            });
            const open = d.state === "active" || d.state === "scheduled";
            return h(
              "tr",
              { "data-delegation": d.id },
              h("td", null, given ? d.delegate.name : d.delegator.name),
              h("td", null, time(d.from), " – ", time(d.until)),
              h("td", null, d.state),
              h("td", null, given && open ? end : ""),
            );
          }),
        );
  fill(
    main,
    h("h1", null, "Delegations"),
    h(
      "p",
      null,
      "While a delegation is in force, its delegate may answer the dialogs assigned to you.",
    ),
    form,
    h("h2", null, "Given"),
    rows(mine.given, true),
    h("h2", null, "Received"),
    rows(mine.received, false),
  );
}
