import { gql } from "../api.ts";
import { announce, errorBox, fill, h, time } from "../dom.ts";
import { personView } from "../names.ts";
import type { PageContext } from "../router.ts";

interface DelegationNode {
  id: string;
  state: string;
  from: string;
  until: string;
  delegator: { name: string; dn: string | null };
  delegate: { name: string; dn: string | null };
}

const FIELDS = `id state from until delegator { name dn } delegate { name dn }`;

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
  const to = h("input", {
    id: "delegate-to",
    name: "to",
    required: "",
    autocomplete: "off",
    placeholder: "a login, e.g. owojcik",
    "aria-describedby": "delegate-hint",
  });
  const from = h("input", {
    id: "delegate-from",
    name: "from",
    placeholder: "now",
    "aria-describedby": "delegate-hint",
  });
  const until = h("input", {
    id: "delegate-until",
    name: "until",
    required: "",
    placeholder: "now+7d or 2026-12-24",
    "aria-describedby": "delegate-hint",
  });
  const form = h(
    "form",
    { id: "delegate-form", class: "delegate", "aria-label": "Delegate my dialogs" },
    h(
      "div",
      { class: "delegate-fields" },
      h(
        "div",
        { class: "field grow" },
        h("label", { for: "delegate-to" }, "Delegate my dialogs to"),
        to,
      ),
      h("div", { class: "field" }, h("label", { for: "delegate-from" }, "From"), from),
      h("div", { class: "field" }, h("label", { for: "delegate-until" }, "Until"), until),
      h("button", { type: "submit" }, "Delegate"),
    ),
    h(
      "p",
      { class: "hint", id: "delegate-hint" },
      "The delegate is named by their login. From and until take a date (2026-12-24), a moment or one relative to now (now+7d); without a start, the delegation begins at once.",
    ),
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
          { id: given ? "given" : "received", class: "delegations" },
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              h("th", { scope: "col" }, given ? "To" : "From"),
              h("th", { scope: "col" }, "Period"),
              h("th", { scope: "col" }, "State"),
              h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Action")),
            ),
          ),
          h(
            "tbody",
            null,
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
              const other = given ? d.delegate : d.delegator;
              return h(
                "tr",
                { "data-delegation": d.id },
                h("td", null, personView(other.dn, other.name)),
                h("td", null, time(d.from), " – ", time(d.until)),
                h("td", null, d.state),
                h("td", null, given && open ? end : ""),
              );
            }),
          ),
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
