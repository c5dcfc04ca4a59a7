import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t, { type Test } from "tap";
import {
  canonicalIdentity,
  createDirectoryClient,
  guidText,
  type DirectoryClientOptions,
} from "../../src/directory/index.ts";
import { toLdif } from "../../src/slapd/index.ts";
import { startDirsrv } from "../support/dirsrv.ts";
import { startGateway, type GatewayServer } from "../support/graphql-gateway.ts";
import { adOrganizationalUnit, adUser, startSambaDC } from "../support/samba.ts";

t.setTimeout(300_000);

/**
 * GraphQL reading the directory (not the projections) finds an entry by its identity as annal
 * names it, `[directory] identity`, on every server: `@ldapFindByEntryUuid`, `@id` and
 * `@ldapFindById` on a stock 389 (nsUniqueId), on 389 with its entryUUID plugin, and on Samba's
 * AD DC (objectGUID, whose GUID text becomes its bytes in the filter).
 */

/** A schema of people below `base` (of `objectClass`), looked up by identity, id and DN. */
async function gatewayOver(t: Test, server: GatewayServer, base: string, objectClass: string) {
  const dir = await mkdtemp(join(tmpdir(), "annal-identity-schema-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const found = `base: "${base}", filter: "(objectClass=${objectClass})"`;
  await writeFile(
    join(dir, "people.graphql"),
    `type Person {
  dn: DN! @ldapField(attribute: "dn")
  id: ID! @id
  cn: String @ldapField
}

extend type Query {
  personByEntryUUID(entryUUID: ID!): Person @ldapFindByEntryUuid(${found})
  personById(id: ID!): Person @ldapFindById(${found})
  personByDn(dn: DN!): Person @ldapFindByDn
}
`,
  );
  const gateway = await startGateway(t, {
    server,
    toml: `[graphql]\nschema = ["${join(dir, "*.graphql")}"]\n\n[graphql.types.Person]\nbase = "${base}"\nobjectClass = ["${objectClass}"]\n`,
  });
  const data = async (query: string, variables: Record<string, unknown>) => {
    const { status, body } = await gateway.query(query, variables);
    t.equal(status, 200, JSON.stringify(body.errors));
    t.equal(body.errors, undefined, JSON.stringify(body.errors));
    return body.data as Record<string, { dn: string; id: string; cn: string } | null>;
  };
  return {
    gateway,
    byIdentity: async (entryUUID: string) =>
      (
        await data(`query($u: ID!) { personByEntryUUID(entryUUID: $u) { dn cn } }`, {
          u: entryUUID,
        })
      ).personByEntryUUID,
    byId: async (id: string) =>
      (await data(`query($id: ID!) { personById(id: $id) { dn } }`, { id })).personById,
    idOf: async (dn: string) =>
      (await data(`query($dn: DN!) { personByDn(dn: $dn) { id } }`, { dn })).personByDn!.id,
  };
}

/** What an id names: `[type, identity]`. */
const decoded = (id: string) => Buffer.from(id, "base64").toString("utf8").split(":");

/** The values of `attributes` of `dn`, read as the server's own administrator. */
async function readAs(
  server: DirectoryClientOptions,
  dn: string,
  attributes: string[],
  binary: string[] = [],
) {
  const client = createDirectoryClient(server);
  try {
    const entry = await client.get(dn, { attributes, binaryAttributes: binary });
    return entry!.attributes;
  } finally {
    await client.close();
  }
}

const PEOPLE = "ou=people,dc=example,dc=org";
const ADA = `uid=ada,${PEOPLE}`;
const SEED = ["ada", "bob"]
  .map(
    (uid) =>
      `dn: uid=${uid},${PEOPLE}\nobjectClass: inetOrgPerson\nuid: ${uid}\ncn: ${uid}\nsn: ${uid}\n`,
  )
  .join("\n");

t.test(
  "a stock 389 (nsUniqueId): an entry is found by its identity, its id and 389's own spelling",
  async (t) => {
    const ds = await startDirsrv({ seedLdif: SEED });
    t.teardown(() => ds.stop());
    const server = { url: ds.url, bindDN: ds.bindDN, password: ds.password, base: ds.base };
    const read = await readAs(server, ADA, ["nsUniqueId", "entryUUID"]);
    t.same(read.entryUUID, undefined, "no entryUUID: Debian's 389 has no plugin for it");
    const nsUniqueId = String(read.nsUniqueId![0]);
    const identity = canonicalIdentity("nsUniqueId", nsUniqueId)!;
    const { byIdentity, byId, idOf } = await gatewayOver(t, server, PEOPLE, "inetOrgPerson");

    t.same(await byIdentity(identity), { dn: ADA, cn: "ada" }, "by its identity as UUID text");
    t.same(await byIdentity(identity.toUpperCase()), { dn: ADA, cn: "ada" }, "in any case");
    t.same(await byIdentity(nsUniqueId), { dn: ADA, cn: "ada" }, "as 389 writes nsUniqueId");
    const id = await idOf(ADA);
    t.same(decoded(id), ["Person", identity], "@id names the entry by its identity");
    t.same(await byId(id), { dn: ADA }, "@ldapFindById finds it again");
    t.equal(
      await byIdentity("00000000-0000-0000-0000-000000000000"),
      null,
      "an identity no entry has",
    );
  },
);

t.test(
  "389 with its entryUUID plugin: auto names an entry by its entryUUID, identity = nsUniqueId by its nsUniqueId",
  async (t) => {
    const ds = await startDirsrv({ entryUUID: true, seedLdif: SEED });
    t.teardown(() => ds.stop());
    const server = { url: ds.url, bindDN: ds.bindDN, password: ds.password, base: ds.base };
    const read = await readAs(server, ADA, ["nsUniqueId", "entryUUID"]);
    const entryUUID = String(read.entryUUID![0]);
    const unique = canonicalIdentity("nsUniqueId", String(read.nsUniqueId![0]))!;
    t.not(entryUUID, unique, "two identities");

    const auto = await gatewayOver(t, server, PEOPLE, "inetOrgPerson");
    t.same(await auto.byIdentity(entryUUID), { dn: ADA, cn: "ada" });
    t.same(decoded(await auto.idOf(ADA)), ["Person", entryUUID]);
    t.equal(
      await auto.byIdentity(unique),
      null,
      "its nsUniqueId is not its identity under auto: the entryUUID is",
    );

    const unique389 = await gatewayOver(
      t,
      { ...server, identity: "nsUniqueId" },
      PEOPLE,
      "inetOrgPerson",
    );
    t.same(await unique389.byIdentity(unique), { dn: ADA, cn: "ada" });
    t.same(decoded(await unique389.idOf(ADA)), ["Person", unique]);
    t.equal(await unique389.byIdentity(entryUUID), null, "nor the entryUUID under nsUniqueId");
  },
);

t.test(
  "Samba's AD DC (objectGUID): an entry is found by its GUID text, sent as the GUID's bytes",
  async (t) => {
    const USERS = "OU=People,DC=example,DC=test";
    const dc = await startSambaDC({
      seedLdif: toLdif([
        adOrganizationalUnit("People"),
        adUser("ada", { parent: USERS, attributes: { sn: ["Lovelace"] } }),
        adUser("bob", { parent: USERS, attributes: { sn: ["Builder"] } }),
      ]),
    });
    t.teardown(() => dc.stop());
    const server = {
      url: dc.url,
      bindDN: dc.bindDN,
      password: dc.password,
      base: dc.base,
      tls: { caFile: dc.caFile, serverName: dc.serverName },
    };
    const ada = `CN=ada,${USERS}`;
    const read = await readAs(server, ada, ["objectGUID"], ["objectGUID"]);
    const guid = read.objectGUID![0] as Buffer;
    const identity = guidText(guid)!;
    // Its first three fields are little-endian: the text is not the bytes' hex.
    t.not(identity.replace(/-/g, ""), guid.toString("hex"));

    for (const setting of ["auto", "objectGUID"] as const) {
      const { byIdentity, byId, idOf } = await gatewayOver(
        t,
        { ...server, identity: setting },
        USERS,
        "user",
      );
      t.same(await byIdentity(identity), { dn: ada, cn: "ada" }, `${setting}: by its GUID text`);
      const id = await idOf(ada);
      t.same(decoded(id), ["Person", identity], `${setting}: @id names it by its GUID text`);
      t.same(await byId(id), { dn: ada }, `${setting}: @ldapFindById finds it again`);
      const bytesAsText = [...guid.toString("hex").matchAll(/.{2}/g)].join("");
      t.equal(
        await byIdentity(
          `${bytesAsText.slice(0, 8)}-${bytesAsText.slice(8, 12)}-${bytesAsText.slice(12, 16)}-${bytesAsText.slice(16, 20)}-${bytesAsText.slice(20)}`,
        ),
        null,
        `${setting}: the bytes' hex in order is another GUID`,
      );
    }
  },
);
