import t from "tap";
import { changeFeed } from "../../src/history/index.ts";
import { completeDialog, dialogIdOf, startWorkflow, type Actor } from "../../src/workflow/index.ts";
import { captureFixture } from "../support/capture.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(180_000);

const PEOPLE = "ou=people,dc=example,dc=org";

const PROMOTE = `
import { bind, defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "promote",
  version: 1,
  parameters: z.object({ dn: z.string(), title: z.string(), approver: z.string() }),
  bindings: { directory: bind.directory() },
  async run(flow, { dn, title, approver }) {
    const { answer, by } = await flow.dialog({
      name: "approve title",
      assignees: [approver],
      schema: z.object({ approved: z.boolean() }),
    });
    if (!answer.approved) return "refused";
    await flow.step("set title", ({ bindings }) =>
      bindings.directory.modify(dn, [{ operation: "replace", attribute: "title", values: [title] }]),
      { as: by },
    );
    return "promoted";
  },
});
`;

t.test(
  "a step's directory write is made as the approver, and the captured change names the instance, the step and the approver",
  async (t) => {
    const c = await captureFixture(t, {
      seedLdif: [
        `dn: uid=ada,${PEOPLE}\nobjectClass: inetOrgPerson\nuid: ada\ncn: Ada\nsn: Lovelace\n`,
        `dn: uid=olga,${PEOPLE}\nobjectClass: inetOrgPerson\nuid: olga\ncn: Olga\nsn: Owner\n`,
      ].join("\n"),
    });
    await c.sync();
    const dir = definitionsDir(t, { "promote.ts": PROMOTE });
    const f = await workflowFixture(t, {
      dir,
      db: c.db,
      bindings: { directory: { client: c.directory, base: c.slapd.base, boundAs: c.slapd.bindDN } },
    });
    const olga: Actor = { ...actor("olga"), dn: `uid=olga,${PEOPLE}` };
    const { instanceId } = await startWorkflow(f, {
      name: "promote",
      parameters: { dn: `uid=ada,${PEOPLE}`, title: "Countess", approver: olga.accountId },
      as: actor("hr"),
    });
    await f.settled(instanceId, "WAITING");
    await completeDialog(f, {
      dialogId: dialogIdOf(instanceId, 1),
      answer: { approved: true },
      as: olga,
    });
    t.equal((await f.settled(instanceId, "COMPLETED")).result, "promoted");

    await c.sync();
    const { changes } = await changeFeed(
      c.db.pool,
      { affects: ["title"] },
      { direction: "forward", limit: 10 },
    );
    t.equal(changes.length, 1);
    const change = changes[0]!;
    t.equal(change.dn, `uid=ada,${PEOPLE}`);
    t.match(
      change.actor,
      /uid=olga,ou=people,dc=example,dc=org/i,
      "the directory records the approver",
    );
    t.match(change.cause, {
      kind: "workflow",
      instanceId,
      workflow: "promote",
      step: "set title",
      attempt: 1,
      approvedBy: { accountId: olga.accountId, name: "olga", dn: olga.dn },
    });
    const entry = await c.directory.get(`uid=ada,${PEOPLE}`);
    t.same(entry?.attributes.title, ["Countess"]);
  },
);
