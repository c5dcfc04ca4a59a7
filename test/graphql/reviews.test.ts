import { writeFileSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { verifyExport } from "../../src/audit/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { OWOJCIK, PROSSI, startAccountsAnnal } from "../support/accounts.ts";
import { eventually } from "../support/eventually.ts";

t.setTimeout(300_000);

const VAULT = "cn=vault,ou=groups,dc=example,dc=org";

/**
 * Access reviews over GraphQL, against annal as `annal start` runs it: an operator starts a
 * campaign of a `[[reviews]]` table, its reviewer reads the items with their history and decides
 * two at once (a keep without the reason the review asks for is refused on its own), the
 * revocation comes back through capture, and the signed report verifies with `/api/keys`.
 */
t.test("a campaign started, decided and reported through GraphQL", async (t) => {
  const app = await startAccountsAnnal(t, {
    provider: "test",
    captureInterval: "250ms",
    seedLdif: [
      `dn: ${VAULT}`,
      "objectClass: groupOfNames",
      "cn: vault",
      `member: ${PROSSI}`,
      `member: ${OWOJCIK}`,
      "",
    ].join("\n"),
    extraToml: `
[[reviews]]
name = "vault"
title = "Who may open the vault"
scope = { groups = "(cn=vault)", base = "ou=groups,dc=example,dc=org" }
reviewers = { by = "group", group = "service:rita" }
deadline = "5d"
reasonRequiredForKeep = true
`,
  });
  const bearer = async (name: string, access: string[] = []) => {
    const { token } = await createToken(app.db.pool, app.store, { name, access: access as never });
    return { authorization: `Bearer ${token}` };
  };
  const admin = await bearer("admin", ["operator", "auditor"]);
  const rita = await bearer("rita");
  const stranger = await bearer("stranger");
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const gql = async (who: Record<string, string>, query: string, variables?: any) => {
    const answer = await app.graphql(query, who, variables);
    t.notOk(answer.body.errors, `no errors: ${JSON.stringify(answer.body.errors)}`);
    return answer.body.data;
  };

  const refused = await app.graphql(`mutation { startReview(review: "vault") { id } }`, rita);
  t.equal(refused.body.errors?.[0]?.extensions?.code, "FORBIDDEN", "starting needs operator");
  const unknown = await app.graphql(`mutation { startReview(review: "nope") { id } }`, admin);
  t.equal(unknown.body.errors?.[0]?.extensions?.code, "ANNAL_REVIEW_NOT_CONFIGURED");

  // Campaigns read the history: annal is ready once capture's first import is in it.
  await eventually(async () => (await fetch(`${app.url}/readyz`)).ok, { what: "annal ready" });
  const started = await gql(
    admin,
    `mutation { startReview(review: "vault") { id title progress { total open } } }`,
  );
  const campaignId = started.startReview.id as string;
  t.match(started.startReview, { title: "Who may open the vault", progress: { total: 2 } });

  const ITEM = `id member group state heldDays since began { kind position } reviewers
    assignees decision reason decidedBy { name } revocation directoryChange { position }`;
  const mine = async (who: Record<string, string>) =>
    (
      await gql(
        who,
        `query($id: ID!) { reviewCampaign(id: $id) { items(mine: true) { nodes { ${ITEM} } } } }`,
        { id: campaignId },
      )
    ).reviewCampaign!.items.nodes as {
      id: string;
      member: string;
      revocation: string | null;
      directoryChange: { position: number } | null;
    }[];
  const items = await eventually(
    async () => {
      const nodes = await mine(rita);
      return nodes.length === 2 ? nodes : undefined;
    },
    { what: "rita's two items" },
  );
  t.match(items[0], {
    group: VAULT,
    state: "open",
    began: { kind: "import", position: Number },
    reviewers: ["service:rita"],
  });
  t.same(await mine(stranger), [], "a stranger sees none of them");
  const prossi = items.find((item) => item.member === PROSSI)!;
  const owojcik = items.find((item) => item.member === OWOJCIK)!;

  // An item's dialog records a reference to its item (version 2 of annal.review-item), not
  // the item; the dialog's data shows the item as the campaign listed it (as version 1 had
  // recorded it in the dialog), in the viewer's inbox and in the item's instance.
  const listed = await app.db.pool.query<{ item: { itemId: string } }>(
    `SELECT jsonb_array_elements(data -> 'items') AS item FROM events
      WHERE type = 'ReviewItemsListed' AND data ->> 'campaignId' = $1`,
    [campaignId],
  );
  const shown = (itemId: string) => ({
    ...listed.rows.find((row) => row.item.itemId === itemId)!.item,
    campaignId,
    review: "vault",
  });
  const opened = await app.db.pool.query<{ data: unknown }>(
    `SELECT d.data -> 'data' AS data FROM events AS d JOIN events AS s ON s.stream_id = d.stream_id
      WHERE d.type = 'DialogOpened' AND s.type = 'WorkflowStarted'
        AND s.data -> 'parameters' ->> 'campaignId' = $1 ORDER BY d.data -> 'data' ->> 'itemId'`,
    [campaignId],
  );
  t.same(
    opened.rows.map((row) => row.data),
    [prossi.id, owojcik.id].sort().map((itemId) => ({ campaignId, itemId })),
    "each dialog records its item's reference",
  );
  const inbox = await gql(rita, `{ myDialogs(first: 10) { nodes { workflow data } } }`);
  t.same(
    (inbox.myDialogs.nodes as { data: { itemId: string } }[])
      .map((node) => node.data)
      .sort((a, b) => a.itemId.localeCompare(b.itemId)),
    [prossi.id, owojcik.id].sort().map(shown),
    "the inbox's dialogs show their items",
  );
  const instanceId = (
    await gql(
      rita,
      `query($id: ID!) { reviewCampaign(id: $id) { items(mine: true) { nodes { id instanceId } } } }`,
      { id: campaignId },
    )
  ).reviewCampaign.items.nodes.find((node: { id: string }) => node.id === prossi.id).instanceId;
  const instance = await gql(admin, `query($id: ID!) { instance(id: $id) { dialogs { data } } }`, {
    id: instanceId,
  });
  t.same(instance.instance.dialogs, [{ data: shown(prossi.id) }], "and its instance's dialog");

  const decided = await gql(
    rita,
    `mutation($id: ID!, $d: [ReviewDecisionInput!]!) {
       decideReviewItems(campaignId: $id, decisions: $d) { itemId error { code message } }
     }`,
    {
      id: campaignId,
      d: [
        { itemId: prossi.id, decision: "keep" },
        { itemId: owojcik.id, decision: "revoke", reason: "left the vault team" },
      ],
    },
  );
  t.match(decided.decideReviewItems, [
    { itemId: prossi.id, error: { code: "ANNAL_REVIEW_DECISION_INVALID" } },
    { itemId: owojcik.id, error: null },
  ]);

  // The revocation is a directory write that capture brings back.
  const revoked = await eventually(
    async () => {
      const all = await gql(
        admin,
        `query($id: ID!) { reviewCampaign(id: $id) { progress { open decided revoked }
           items { nodes { ${ITEM} } } } }`,
        { id: campaignId },
      );
      const node = (all.reviewCampaign.items.nodes as typeof items).find(
        (item) => item.member === OWOJCIK,
      );
      return node?.revocation === "done" && node.directoryChange ? all.reviewCampaign : undefined;
    },
    { what: "the revocation captured back", timeout: 60_000 },
  );
  t.match(revoked.progress, { open: 1, decided: 1, revoked: 1 });

  const history = await gql(
    admin,
    `query($m: DN!, $g: DN!) { membershipReviews(member: $m, group: $g) {
       campaign { id review } item { decision reason decidedBy { name } decidedAt } } }`,
    { m: OWOJCIK, g: VAULT },
  );
  t.match(history.membershipReviews, [
    {
      campaign: { id: campaignId, review: "vault" },
      item: { decision: "revoke", reason: "left the vault team", decidedBy: { name: "rita" } },
    },
  ]);
  const unreviewed = await gql(
    admin,
    `{ unreviewedMemberships(first: 1000) { group member lastReviewedAt } }`,
  );
  const pairs = (unreviewed.unreviewedMemberships as { group: string; member: string }[]).map(
    (row) => `${row.member} in ${row.group}`,
  );
  t.ok(pairs.includes(`${PROSSI} in ${VAULT}`), "an open item is not a review");
  t.notOk(
    pairs.some((pair) => pair.startsWith(OWOJCIK) && pair.endsWith(VAULT)),
    "a revoked membership is no longer held",
  );

  const report = await gql(
    admin,
    `query($id: ID!) { reviewReport(campaignId: $id) { body signature } }`,
    { id: campaignId },
  );
  const file = path.join(t.testdir({}), "report.json");
  writeFileSync(file, report.reviewReport.body as string);
  const keys = (await (await fetch(`${app.url}/api/keys`)).json()) as {
    keys: Record<string, unknown>[];
  };
  const statement = await verifyExport(file, report.reviewReport.signature as string, keys);
  t.ok(statement.logPosition.position > 0);
  const denied = await app.graphql(
    `query($id: ID!) { reviewReport(campaignId: $id) { body } }`,
    rita,
    { id: campaignId },
  );
  t.equal(denied.body.errors?.[0]?.extensions?.code, "FORBIDDEN", "the report needs auditor");
});
