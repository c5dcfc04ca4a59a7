import { writeFile } from "node:fs/promises";
import path from "node:path";
import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import { changeFeed } from "../../src/history/index.ts";
import { freePort } from "../../src/ports.ts";
import { waitForProjection } from "../../src/projector/index.ts";
import { toLdif } from "../../src/slapd/index.ts";
import { completeDialog, dialogIdOf, startWorkflow, type Actor } from "../../src/workflow/index.ts";
import { directoryCaptureFixture } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { adGroup, adOrganizationalUnit, adUser, startSambaDC } from "../support/samba.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

/**
 * annal's writes through Active Directory (Samba's AD DC, LDAPS verified), captured by the
 * "ad" source and attributed to who asked: a GraphQL mutation to its account, a workflow step
 * to its instance and approver. AD has no proxied authorization (RFC 4370): annal writes as
 * its own account there, and its notes of intent keep the attribution. One DC for the file.
 */
t.setTimeout(300_000);

const BASE = "DC=example,DC=test";
const PEOPLE = `OU=People,${BASE}`;
const ADA = `CN=ada,${PEOPLE}`;
const BOB = `CN=bob,${PEOPLE}`;
const OLGA = `CN=olga,${PEOPLE}`;
const TEAM = `CN=team,${PEOPLE}`;
const LEADS = `CN=leads,${PEOPLE}`;

const dc = await startSambaDC({
  seedLdif: toLdif([
    adOrganizationalUnit("People"),
    ...["ada", "bob", "olga"].map((name) =>
      adUser(name, { parent: PEOPLE, attributes: { sn: [name] } }),
    ),
    adGroup("team", [ADA], { parent: PEOPLE }),
    adGroup("leads", [], { parent: PEOPLE }),
  ]),
});
t.teardown(() => dc.stop());
const tls = { caFile: dc.caFile, serverName: dc.serverName };

const GATEWAY = `
type User {
  id: ID! @id
  dn: DN! @ldapField(attribute: "dn")
  sAMAccountName: String! @ldapField
  title: String @ldapField
  description: String @ldapField
}

type Group {
  id: ID! @id
  dn: DN! @ldapField(attribute: "dn")
  members: [DN!]! @ldapField(attribute: "member") @ensureArray
}

input UserChanges {
  title: String
  description: String
}

input UserModification {
  operation: LDAPChangeOperation!
  changes: UserChanges!
}

input GroupChanges {
  member: [DN!]
}

input GroupModification {
  operation: LDAPChangeOperation!
  changes: GroupChanges!
}

extend type Query {
  user(q: String!): User
    @ldapFind(base: "${PEOPLE}", filter: "(objectClass=user)", qAttributes: ["sAMAccountName"])
}

extend type Mutation {
  updateUser(dn: DN, input: [UserModification!]!): User @ldapModify
  updateGroup(dn: DN, input: [GroupModification!]!): Group @ldapModify
}
`;

interface Answer {
  data?: Record<string, unknown> | null;
  errors?: unknown[];
}

t.test(
  "GraphQL mutations land in AD and come back through capture, attributed to the account; REST reads them",
  async (t) => {
    const dir = t.testdir({ gateway: { "directory.graphql": GATEWAY } });
    const db = await testDatabase(t);
    const file = path.join(dir, "annal.toml");
    await writeFile(
      file,
      `[server]
port = ${await freePort()}

[database]
url = "${db.url}"

[directory]
url = "${dc.url}"
bindDN = "${dc.bindDN}"
password = "\${LDAP_PASSWORD}"
base = "${BASE}"
identity = "objectGUID"

[directory.tls]
caFile = "${tls.caFile}"
serverName = "${tls.serverName}"

[[directory.types]]
name = "user"
base = "${BASE}"
filter = "(&(objectClass=user)(!(objectClass=computer)))"

[[directory.types]]
name = "group"
base = "${BASE}"
filter = "(objectClass=group)"

[directory.capture]
source = "ad"
interval = "200ms"

[graphql]
schema = ["gateway/*.graphql"]

[graphql.types.User]
base = "${PEOPLE}"
objectClass = ["user"]

[graphql.types.Group]
base = "${PEOPLE}"
objectClass = ["group"]
`,
    );
    const config = await loadConfig({
      configPath: file,
      cwd: dir,
      env: { LDAP_PASSWORD: dc.password },
    });
    const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
    t.teardown(() => annal.stop());
    const { token } = await createToken(db.pool, annal.store, {
      name: "editor",
      access: ["read", "write"],
    });
    const headers = { authorization: `Bearer ${token}` };
    const get = async (url: string) => {
      const response = await fetch(`${annal.url}${url}`, { headers });
      t.equal(response.status, 200, url);
      return (await response.json()) as { nodes: Record<string, unknown>[] };
    };
    const graphql = async (query: string, variables: Record<string, unknown>) => {
      const response = await fetch(`${annal.url}/graphql`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as Answer;
    };
    await eventually(
      async () =>
        (await db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'ad'")).rowCount,
      { what: "the first start's import" },
    );
    await waitForProjection(db.pool, "entries", await annal.store.head(), 30_000);

    const titled = await graphql(
      `
        mutation ($dn: DN) {
          updateUser(dn: $dn, input: [{ operation: replace, changes: { title: "Architect" } }]) {
            title
          }
        }
      `,
      { dn: BOB },
    );
    t.equal(titled.errors, undefined, JSON.stringify(titled.errors));
    t.same(titled.data, { updateUser: { title: "Architect" } }, "the answer reads its write");
    const joined = await graphql(
      `
        mutation ($dn: DN, $member: DN!) {
          updateGroup(dn: $dn, input: [{ operation: add, changes: { member: [$member] } }]) {
            members
          }
        }
      `,
      { dn: TEAM, member: BOB },
    );
    t.equal(joined.errors, undefined, JSON.stringify(joined.errors));
    t.same(
      [...((joined.data?.updateGroup as { members: string[] }).members ?? [])].sort(),
      [ADA, BOB].sort(),
    );

    // What a REST client reads: the entry and the feed, each change with its cause.
    const architects = await get(
      `/api/entries/users?filter=${encodeURIComponent("(title=Architect)")}`,
    );
    t.same(
      architects.nodes.map((node) => node.dn),
      [BOB],
    );
    const changes = await eventually(
      async () => {
        const feed = await get("/api/changes?type=modify");
        return feed.nodes.length >= 2 ? feed.nodes : undefined;
      },
      { what: "both writes in the feed" },
    );
    t.same(
      changes.map((node) => [node.dn, node.attributes]),
      [
        [BOB, ["title"]],
        [TEAM, ["member"]],
      ],
    );
    for (const change of changes) {
      t.match(change, { actor: null, cause: { kind: "mutation", account: "editor" } });
    }
  },
);

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
  "a workflow's steps write to AD as annal, and the changes name the instance, the step and the approver",
  async (t) => {
    const c = await directoryCaptureFixture(t, {
      server: { ...dc, tls },
      source: "ad",
      types: [
        { name: "user", base: BASE, filter: "(objectClass=user)" },
        { name: "group", base: BASE, filter: "(objectClass=group)" },
      ],
    });
    await c.sync();
    const f = await workflowFixture(t, {
      dir: definitionsDir(t, { "promote.ts": PROMOTE }),
      db: c.db,
      bindings: { directory: { client: c.directory, base: BASE, boundAs: dc.bindDN } },
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
    t.equal(await c.sync(), 2);
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
    t.match(written[0], {
      actor: null,
      cause: { kind: "workflow", instanceId, step: "set title", approvedBy },
    });
    t.match(written[1], {
      actor: null,
      cause: { kind: "workflow", instanceId, step: "join group", approvedBy },
    });
    const entry = await c.directory.get(ADA, { attributes: ["title"] });
    t.same(entry?.attributes.title, ["Lead"], "in AD, written as annal's account");
  },
);
