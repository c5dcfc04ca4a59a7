import t from "tap";
import { createDirectoryClient, eq } from "../../src/directory/index.ts";
import { completeRanges } from "../../src/directory/ranges.ts";
import { toLdifChunks } from "../../src/slapd/index.ts";
import { directoryCaptureFixture } from "../support/capture.ts";
import { adGroup, adOrganizationalUnit, adUser, startSambaDC } from "../support/samba.ts";

/**
 * Range retrieval against Samba's AD DC: a group of 5,000 members read in ranges (Samba
 * answers in ranges when asked for one, a Windows DC past 1,500 values on its own) comes back
 * whole, named `member`, in a search and in a read, from a client with a pool of one; and
 * capture's import of it keeps every member under `member`.
 */
const PEOPLE = "OU=People,DC=example,DC=test";
const MEMBERS = 5_000;
const BIG = `CN=big,${PEOPLE}`;

t.test("a group answered in ranges is read whole, and no ;range= name is kept", async (t) => {
  const users = Array.from({ length: MEMBERS }, (_, i) => adUser(`u${i}`, { parent: PEOPLE }));
  const dc = await startSambaDC({
    seedLdif: toLdifChunks([
      adOrganizationalUnit("People"),
      ...users,
      adGroup(
        "big",
        users.map((user) => user.dn),
        { parent: PEOPLE },
      ),
    ]),
  });
  t.teardown(() => dc.stop());
  const directory = createDirectoryClient({
    url: dc.url,
    bindDN: dc.bindDN,
    password: dc.password,
    tls: { caFile: dc.caFile, serverName: dc.serverName },
    poolSize: 1,
  });
  t.teardown(() => directory.close());

  const found = [];
  for await (const page of directory.search(PEOPLE, {
    scope: "one",
    filter: eq("cn", "big"),
    attributes: ["member;range=0-1499"],
  })) {
    found.push(...page);
  }
  t.equal(found.length, 1);
  const names = Object.keys(found[0]!.attributes);
  t.same(names, ["member"], "named member, no range");
  const members = found[0]!.attributes.member!.map(String);
  t.equal(members.length, MEMBERS, "every member, past the first range");
  t.equal(new Set(members.map((dn) => dn.toLowerCase())).size, MEMBERS, "none twice");

  const read = await directory.get(BIG, { attributes: ["member;range=0-999"] });
  t.same(Object.keys(read!.attributes), ["member"]);
  t.equal(read!.attributes.member!.length, MEMBERS, "a read completes its ranges too");

  const f = await directoryCaptureFixture(t, {
    server: { ...dc, tls: { caFile: dc.caFile, serverName: dc.serverName } },
    source: "ad",
    types: [
      { name: "user", base: PEOPLE, filter: "(objectClass=user)" },
      { name: "group", base: PEOPLE, filter: "(objectClass=group)" },
    ],
  });
  await f.sync();
  const stored = await f.db.pool.query<{ names: string[]; members: number }>(
    `SELECT ARRAY(SELECT jsonb_object_keys(data->'state'->'attributes')) AS names,
            jsonb_array_length(data->'state'->'attributes'->'member') AS members
       FROM events WHERE type = 'EntrySnapshot' AND data->'state'->>'dn' = $1`,
    [BIG],
  );
  t.equal(stored.rows[0]?.members, MEMBERS, "the import stores every member");
  t.notOk(
    stored.rows[0]?.names.some((name) => name.includes(";")),
    "and no attribute name with a range",
  );
});

t.test("a directory that stops answering the ranges is an error, not a cut list", async (t) => {
  const entry = { dn: "CN=g,DC=x", attributes: { "member;range=0-1499": ["a"] } };
  await t.rejects(
    completeRanges([entry], async () => undefined),
    { code: "ANNAL_LDAP_OPERATION_FAILED", message: /not the range after 1499/ },
  );
});
