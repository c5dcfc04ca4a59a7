import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { createDirectoryClient } from "../../src/directory/index.ts";
import { waitForProjection } from "../../src/projector/index.ts";
import { GATEWAY_TOML } from "../support/accounts.ts";
import { appConfig } from "../support/app-config.ts";
import { nextSecond } from "../support/clock.ts";
import { startDirsrv } from "../support/dirsrv.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(300_000);

const PEOPLE = "ou=people,dc=example,dc=org";
const ADA = `uid=ada,${PEOPLE}`;
const BOB = `uid=bob,${PEOPLE}`;
const CARL = `uid=carl,${PEOPLE}`;
const DAN = `uid=dan,${PEOPLE}`;
const TEAM = "cn=team,ou=groups,dc=example,dc=org";

const person = (uid: string, sn: string) =>
  `dn: uid=${uid},${PEOPLE}\nobjectClass: inetOrgPerson\nuid: ${uid}\ncn: ${uid}\nsn: ${sn}\n`;

const SEED = [
  person("ada", "Lovelace"),
  person("bob", "Builder"),
  person("carl", "Sagan"),
  person("dan", "Brown"),
  `dn: ${TEAM}\nobjectClass: groupOfNames\ncn: team\nmember: ${ADA}\n`,
].join("\n");

interface GraphqlAnswer {
  data?: Record<string, unknown> | null;
  errors?: unknown[];
}

/**
 * annal in front of 389 Directory Server as Debian ships it (entries named by nsUniqueId, the
 * Retro Changelog as the change source), black-box, as `annal start` runs it: the same
 * history as in front of OpenLDAP, through the REST channel and GraphQL, and annal's own
 * writes land in 389 and come back attributed to who asked for them.
 */
t.test(
  "annal in front of 389: import, changes, history, at, memberships, feed, GraphQL, its own writes",
  async (t) => {
    const ds = await startDirsrv({ changelog: true, seedLdif: SEED });
    t.teardown(() => ds.stop());
    const db = await testDatabase(t);
    const config = await appConfig(t, {
      db,
      slapd: ds,
      captureInterval: "200ms",
      captureSource: "changelog",
      extraToml: `${GATEWAY_TOML}
[[directory.types]]
name = "group"
base = "ou=groups,dc=example,dc=org"
filter = "(objectClass=groupOfNames)"
`,
    });
    const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
    t.teardown(() => annal.stop());
    const { token } = await createToken(db.pool, annal.store, {
      name: "editor",
      access: ["read", "write"],
    });
    const headers = { authorization: `Bearer ${token}` };
    const get = async (path: string) => {
      const response = await fetch(`${annal.url}${path}`, { headers });
      t.equal(response.status, 200, path);
      return (await response.json()) as Record<string, unknown> & {
        nodes: Record<string, unknown>[];
      };
    };
    const graphql = async (query: string, variables: Record<string, unknown> = {}) => {
      const response = await fetch(`${annal.url}/graphql`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as GraphqlAnswer;
    };
    await eventually(
      async () =>
        (await db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'changelog'"))
          .rowCount,
      { what: "the first start's import" },
    );
    // A search answers once the entries' projection holds the import (before, 503
    // ANNAL_HISTORY_BUILDING, which get() would count as a failure).
    const head = await annal.store.head();
    await waitForProjection(db.pool, "entries", head, 30_000);
    await waitForProjection(db.pool, "entry_versions", head, 30_000);
    const imported = await eventually(
      async () => {
        const answer = await get(`/api/entries/users?filter=${encodeURIComponent("(sn=*)")}`);
        return answer.nodes.length === 4 ? answer : undefined;
      },
      { what: "the REST channel serves the imported people" },
    );
    t.same(
      imported.nodes.map((node) => node.dn).sort(),
      [ADA, BOB, CARL, DAN],
      "the import has every person",
    );
    const adaBefore = imported.nodes.find((node) => node.dn === ADA)!;

    // Changes made in 389 by its own tools' account, after a moment to ask `at`.
    const before = await nextSecond();
    const root = createDirectoryClient({ url: ds.url, bindDN: ds.bindDN, password: ds.password });
    t.teardown(() => root.close());
    // As the suite's slapd has it (src/slapd/config.ts): annal writes as the person or account
    // that asked (proxied authorization), and annal, not the directory, decides who may change
    // what, so any account the directory authenticates may write.
    await root.modify("dc=example,dc=org", [
      {
        operation: "add",
        attribute: "aci",
        values:
          '(targetattr="*")(version 3.0; acl "annal decides who may write"; allow (write, add, delete) userdn="ldap:///all";)',
      },
    ]);
    await root.modify(ADA, [{ operation: "replace", attribute: "title", values: "Engineer" }]);
    await root.modify(TEAM, [{ operation: "add", attribute: "member", values: BOB }]);
    await root.modifyDN(CARL, "uid=carla");
    await root.delete(DAN);
    const feed = await eventually(
      async () => {
        const changes = await get("/api/changes");
        return changes.nodes.some((node) => node.dn === DAN && node.type === "delete")
          ? changes
          : undefined;
      },
      { what: "the changes are captured" },
    );
    t.same(
      feed.nodes.map((node) => [node.type, node.dn]).filter(([, dn]) => dn !== "dc=example,dc=org"),
      [
        ["modify", ADA],
        ["modify", TEAM],
        ["modrdn", `uid=carla,${PEOPLE}`],
        ["delete", DAN],
      ],
      "the feed, in the order of the changelog",
    );
    const deleted = feed.nodes.find((node) => node.dn === DAN)!;
    t.match(deleted, { actor: null }, "a delete's author is not in 389's changelog: unknown");
    const modified = feed.nodes.find((node) => node.dn === ADA)!;
    t.equal(modified.actor, "cn=directory manager");

    // The REST channel: a search, the entry at a past moment and now, its changes, memberships.
    // The feed reads the log; a search reads the entries' projection, once it has the changes.
    const captured = await annal.store.head();
    await waitForProjection(db.pool, "entries", captured, 30_000);
    await waitForProjection(db.pool, "entry_versions", captured, 30_000);
    const engineers = await get(
      `/api/entries/users?filter=${encodeURIComponent("(title=Engineer)")}`,
    );
    t.same(
      engineers.nodes.map((node) => node.dn),
      [ADA],
    );
    t.equal(engineers.nodes[0]!.id, adaBefore.id, "one identity before and after");
    // The changelog's time has whole seconds: the moment before the first change's second.
    const justBefore = new Date(Math.floor(before.getTime() / 1000) * 1000 - 1).toISOString();
    const then = await get(`/api/entries/users/${encodeURIComponent(ADA)}?at=${justBefore}`);
    t.notOk((then as { title?: unknown }).title, "at the moment before: no title");
    const adaChanges = await get(`/api/entries/users/${encodeURIComponent(ADA)}/changes`);
    t.ok(
      adaChanges.nodes.some((node) => node.type === "modify"),
      "ada's history has the modify",
    );
    const memberships = await eventually(
      async () => {
        const answer = await get(`/api/entries/users/${encodeURIComponent(BOB)}/memberships`);
        return answer.nodes.length > 0 ? answer : undefined;
      },
      { what: "bob's membership is in the memberships projection" },
    );
    t.match(memberships.nodes, [{ group: { dn: TEAM } }], "bob's membership, from the changelog");
    // during: the changes and memberships of a period, before the changes and up to now.
    const now = new Date().toISOString();
    const anHourBefore = new Date(Date.parse(justBefore) - 3_600_000).toISOString();
    const changesDuring = async (period: string) =>
      (await get(`/api/entries/users/${encodeURIComponent(ADA)}/changes?during=${period}`)).nodes;
    t.ok(
      (await changesDuring(`${justBefore}/${now}`)).some((node) => node.type === "modify"),
      "during the changes' period: ada's modify",
    );
    t.notOk(
      (await changesDuring(`${anHourBefore}/${justBefore}`)).some((node) => node.type === "modify"),
      "during the hour before: none",
    );
    const membershipsDuring = async (period: string) =>
      (await get(`/api/entries/users/${encodeURIComponent(BOB)}/memberships?during=${period}`))
        .nodes;
    t.match(
      await membershipsDuring(`${justBefore}/${now}`),
      [{ group: { dn: TEAM } }],
      "bob's membership during the changes' period",
    );
    t.same(await membershipsDuring(`${anHourBefore}/${justBefore}`), [], "and none before");

    // GraphQL reads the projections, and the directory when asked to.
    const fromProjection = await graphql(`
      {
        person(by: { uid: "ada" }) {
          title
          sn
        }
      }
    `);
    t.same(fromProjection.data, { person: { title: "Engineer", sn: "Lovelace" } });
    const fromDirectory = await graphql(`
      {
        person(by: { uid: "ada" }) {
          title
          sn
          groups {
            dn
          }
        }
      }
    `);
    t.same(fromDirectory.data, {
      person: { title: "Engineer", sn: "Lovelace", groups: [{ dn: TEAM }] },
    });

    // annal's own write: a mutation lands in 389, and comes back through the changelog with
    // its cause, for the account that asked.
    const written = await graphql(
      `
        mutation ($dn: DN) {
          updatePerson(dn: $dn, input: [{ operation: replace, changes: { title: "Architect" } }]) {
            title
          }
        }
      `,
      { dn: BOB },
    );
    t.same(written.data, { updatePerson: { title: "Architect" } });
    t.equal(written.errors, undefined, JSON.stringify(written.errors));
    const inDirectory = await root.get(BOB, { attributes: ["title"] });
    t.same(inDirectory?.attributes.title, ["Architect"], "the write is in 389");
    const change = await eventually(async () =>
      (await get("/api/changes?type=modify")).nodes.find((node) => node.dn === BOB),
    );
    t.match(change.cause, { kind: "mutation", account: "editor" }, "attributed to the mutation");
  },
);
