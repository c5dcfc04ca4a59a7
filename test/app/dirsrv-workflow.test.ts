import t from "tap";
import { changeFeed } from "../../src/history/index.ts";
import { completeDialog, dialogIdOf, startWorkflow, type Actor } from "../../src/workflow/index.ts";
import { directoryCaptureFixture, person } from "../support/capture.ts";
import { startDirsrv } from "../support/dirsrv.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

/**
 * A workflow's steps write to 389 Directory Server (a stock instance with its Retro Changelog)
 * and come back through capture from the changelog attributed to the instance, the step and
 * the approver (issue 51 item 6: annal's own writes, workflow steps as well as GraphQL's
 * mutations, test/app/dirsrv). 389 writes annal's bind DN into modifiersName under proxied
 * authorization: annal's note of intent is what names who asked.
 */
t.setTimeout(240_000);

const BASE = "dc=example,dc=org";
const ADA = `uid=ada,ou=people,${BASE}`;
const OLGA = `uid=olga,ou=people,${BASE}`;
const LEADS = `cn=leads,ou=groups,${BASE}`;

const SEED = `dn: ${ADA}
objectClass: inetOrgPerson
uid: ada
cn: Ada
sn: Lovelace

dn: ${OLGA}
objectClass: inetOrgPerson
uid: olga
cn: Olga
sn: Olga

dn: ${LEADS}
objectClass: groupOfNames
cn: leads
member: ${OLGA}
`;

const PROMOTE = `
import { bind, defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "promote",
  version: 1,
  parameters: z.object({ dn: z.string(), group: z.string(), approver: z.string() }),
  bindings: { directory: bind.directory() },
  async run(flow, { dn, group, approver }) {
    const { answer, by } = await flow.dialog({
      name: "approve",
      assignees: [approver],
      schema: z.object({ approved: z.boolean() }),
    });
    if (!answer.approved) return "refused";
    await flow.step("set title", ({ bindings }) =>
      bindings.directory.modify(dn, [{ operation: "replace", attribute: "title", values: ["Lead"] }]),
      { as: by },
    );
    await flow.step("join group", ({ bindings }) =>
      bindings.directory.modify(group, [{ operation: "add", attribute: "member", values: [dn] }]),
      { as: by },
    );
    return "promoted";
  },
});
`;

t.test(
  "389: a workflow's steps land in the directory and come back from the changelog naming the instance, the step and the approver",
  async (t) => {
    const ds = await startDirsrv({ changelog: true, seedLdif: SEED });
    t.teardown(() => ds.stop());
    const c = await directoryCaptureFixture(t, { server: ds, source: "changelog" });
    // annal writes a step as its approver (proxied authorization): 389 holds olga to her own
    // rights, as it should, so she is given these.
    await c.directory.modify(BASE, [
      {
        operation: "add",
        attribute: "aci",
        values: `(targetattr="title || member")(version 3.0; acl "olga promotes"; allow (write) userdn="ldap:///${OLGA}";)`,
      },
    ]);
    await c.sync();
    const f = await workflowFixture(t, {
      dir: definitionsDir(t, { "promote.ts": PROMOTE }),
      db: c.db,
      bindings: { directory: { client: c.directory, base: BASE, boundAs: ds.bindDN } },
    });
    const olga: Actor = { ...actor("olga"), dn: OLGA };
    const { instanceId } = await startWorkflow(f, {
      name: "promote",
      parameters: { dn: ADA, group: LEADS, approver: olga.accountId },
      as: actor("hr"),
    });
    await f.settled(instanceId, "WAITING");
    await completeDialog(f, {
      dialogId: dialogIdOf(instanceId, 1),
      answer: { approved: true },
      as: olga,
    });
    t.equal((await f.settled(instanceId, "COMPLETED")).result, "promoted");
    // A write made beside annal, by 389's own tools' account, names no workflow.
    await c.directory.add(`uid=zed,ou=people,${BASE}`, person("zed"));
    t.equal(await c.sync(), 3, "the two steps' writes and the add");
    const { changes } = await changeFeed(c.db.pool, {}, { direction: "forward", limit: 10 });
    const written = changes.filter((change) => change.changeType === "modify");
    t.same(
      written.map((change) => [change.dn, change.attributes]),
      [
        [ADA, ["title"]],
        [LEADS, ["member"]],
      ],
    );
    const approvedBy = { accountId: olga.accountId, name: "olga", dn: OLGA };
    t.match(written[0], { cause: { kind: "workflow", instanceId, step: "set title", approvedBy } });
    t.match(written[1], {
      cause: { kind: "workflow", instanceId, step: "join group", approvedBy },
    });
    const added = changes.find((change) => change.changeType === "add");
    t.equal(added?.cause ?? undefined, undefined, "an outside write has no cause");
    const entry = await c.directory.get(ADA, { attributes: ["title"] });
    t.same(entry?.attributes.title, ["Lead"], "in 389");
  },
);
