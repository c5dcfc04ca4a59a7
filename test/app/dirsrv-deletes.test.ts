import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { createDirectoryClient } from "../../src/directory/index.ts";
import { waitForProjection } from "../../src/projector/index.ts";
import { GATEWAY_TOML } from "../support/accounts.ts";
import { appConfig } from "../support/app-config.ts";
import { startDirsrv } from "../support/dirsrv.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(300_000);

const PEOPLE = "ou=people,dc=example,dc=org";
const ADA = `uid=ada,${PEOPLE}`;
const BOB = `uid=bob,${PEOPLE}`;
const CARL = `uid=carl,${PEOPLE}`;
const CARLS_PHONE = `cn=phone,${CARL}`;

const person = (uid: string) =>
  `dn: uid=${uid},${PEOPLE}\nobjectClass: inetOrgPerson\nuid: ${uid}\ncn: ${uid}\nsn: ${uid}\n`;
const SEED = [
  person("ada"),
  person("bob"),
  person("carl"),
  `dn: ${CARLS_PHONE}\nobjectClass: device\ncn: phone\n`,
].join("\n");

interface Change {
  readonly type: string;
  readonly dn: string;
  readonly actor: string | null;
  readonly cause?: { kind: string; account?: string } | null;
}

/**
 * 389's Retro Changelog records no author of a delete. annal's own delete (a GraphQL mutation)
 * still comes back caused by the mutation, through its note of intent for that entry; a
 * delete made with the directory's own tools stays unknown, also right after annal tried to
 * delete the same entry and 389 refused (the refused write's note is withdrawn). Black-box, as
 * `annal start` runs it over a stock 389 with the changelog.
 */
t.test(
  "389: annal's own delete is attributed, a delete made outside annal is not, even just after annal's was refused",
  async (t) => {
    const ds = await startDirsrv({ changelog: true, seedLdif: SEED });
    t.teardown(() => ds.stop());
    const root = createDirectoryClient({ url: ds.url, bindDN: ds.bindDN, password: ds.password });
    t.teardown(() => root.close());
    // As test/app/dirsrv: annal, not the directory, decides who may write.
    await root.modify("dc=example,dc=org", [
      {
        operation: "add",
        attribute: "aci",
        values:
          '(targetattr="*")(version 3.0; acl "annal decides who may write"; allow (write, add, delete) userdn="ldap:///all";)',
      },
    ]);
    const db = await testDatabase(t);
    const config = await appConfig(t, {
      db,
      slapd: ds,
      captureInterval: "200ms",
      captureSource: "changelog",
      extraToml: GATEWAY_TOML,
    });
    const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
    t.teardown(() => annal.stop());
    const { token } = await createToken(db.pool, annal.store, {
      name: "editor",
      access: ["read", "write"],
    });
    const headers = { authorization: `Bearer ${token}` };
    const changes = async () => {
      const response = await fetch(`${annal.url}/api/changes?type=delete`, { headers });
      t.equal(response.status, 200);
      return ((await response.json()) as { nodes: Change[] }).nodes;
    };
    const deleteOf = (dn: string) =>
      eventually(async () => (await changes()).find((change) => change.dn === dn), {
        what: `the delete of ${dn} is captured`,
      });
    const graphql = async (query: string, variables: Record<string, unknown> = {}) => {
      const response = await fetch(`${annal.url}/graphql`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as {
        data?: Record<string, unknown> | null;
        errors?: { extensions?: { code?: string } }[];
      };
    };
    const deletePerson = (dn: string) =>
      graphql(
        `
          mutation ($dn: DN) {
            deletePerson(dn: $dn)
          }
        `,
        { dn },
      );
    await eventually(
      async () =>
        (await db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'changelog'"))
          .rowCount,
      { what: "the first start's import" },
    );
    await waitForProjection(db.pool, "entries", await annal.store.head(), 30_000);

    // annal's own delete: 389 logs no author, annal's note of intent names the mutation.
    const mine = await deletePerson(BOB);
    t.match(mine, { data: { deletePerson: BOB } }, JSON.stringify(mine.errors));
    t.equal(mine.errors, undefined);
    t.notOk(await root.get(BOB), "bob is gone from 389");
    const bobs = await deleteOf(BOB);
    t.equal(bobs.actor, null, "389's changelog names no author of a delete");
    t.match(bobs.cause, { kind: "mutation", account: "editor" }, "caused by the mutation");

    // A delete made with 389's own tools, no note of annal's open: unknown.
    await root.delete(ADA);
    const adas = await deleteOf(ADA);
    t.equal(adas.actor, null);
    t.notOk(adas.cause, "a delete annal did not make is not annal's");

    // annal's delete of carl is refused (he has an entry below him): its note is withdrawn,
    // and the delete of carl made right after by 389's own tools stays unknown.
    const refused = await deletePerson(CARL);
    t.ok(refused.errors?.length, "389 refuses to delete an entry with entries below it");
    t.ok(await root.get(CARL), "carl is still in 389");
    const open = await db.pool.query("SELECT 1 FROM directory_write_intents");
    t.equal(open.rowCount, 0, "no note of annal's is open");
    await root.delete(CARLS_PHONE);
    await root.delete(CARL);
    const carls = await deleteOf(CARL);
    t.equal(carls.actor, null);
    t.notOk(carls.cause, "the refused mutation did not make carl's delete");
  },
);
