import { existsSync } from "node:fs";
import { Client, StrongAuthRequiredError, type Entry } from "ldapts";
import t from "tap";
import { toLdifChunks, type LdifEntry } from "../../src/slapd/index.ts";
import {
  adDN,
  adGroup,
  adOrganizationalUnit,
  adUser,
  SAMBA_BASE,
  startSambaDC,
  type SambaDC,
} from "./samba.ts";

const PEOPLE = `OU=People,${SAMBA_BASE}`;
const GROUPS = `OU=Groups,${SAMBA_BASE}`;
const USERS = 5000;
const names = Array.from({ length: USERS }, (_, i) => `user${String(i).padStart(5, "0")}`);
const everyone = adDN("everyone", GROUPS);

function* seed(): Generator<LdifEntry> {
  yield adOrganizationalUnit("People");
  yield adOrganizationalUnit("Groups");
  for (const name of names) {
    yield adUser(name, { parent: PEOPLE, attributes: { givenName: ["Test"], sn: [name] } });
  }
  yield adGroup(
    "everyone",
    names.map((name) => adDN(name, PEOPLE)),
    { parent: GROUPS },
  );
}

const dc = await startSambaDC({ seedLdif: toLdifChunks(seed()) });
t.teardown(() => dc.stop());
t.comment(
  `Samba DC on ${dc.url}: provision ${dc.timings.provisionMs} ms, ldbadd of ${USERS + 3} objects ${dc.timings.seedMs} ms, start ${dc.timings.startMs} ms`,
);

async function administrator(target: SambaDC): Promise<Client> {
  const client = new Client({ url: target.url, timeout: 30_000, tlsOptions: target.tlsOptions });
  await client.bind(target.bindDN, target.password);
  return client;
}

t.test("an LDAPS simple bind as Administrator works with the DC's CA and name", async (t) => {
  t.match(dc.url, /^ldaps:\/\/127\.0\.0\.\d+:636$/);
  t.equal(dc.serverName.toLowerCase(), "dc1.example.test", "the name the certificate gives");
  const client = new Client({
    url: dc.url,
    timeout: 10_000,
    tlsOptions: { ca: dc.tlsOptions.ca, servername: dc.serverName },
  });
  t.teardown(() => client.unbind());
  await client.bind(dc.bindDN, dc.password);
  const { searchEntries } = await client.search(dc.bindDN, {
    scope: "base",
    attributes: ["sAMAccountName"],
  });
  t.equal(searchEntries[0]?.sAMAccountName, "Administrator");

  // TLS is verified, not waved through: the address is not the name, and the CA is the DC's own
  const byAddress = new Client({ url: dc.url, tlsOptions: { ca: dc.tlsOptions.ca } });
  await t.rejects(byAddress.bind(dc.bindDN, dc.password), {
    code: "ERR_TLS_CERT_ALTNAME_INVALID",
  });
  const withoutCA = new Client({ url: dc.url, tlsOptions: { servername: dc.serverName } });
  await t.rejects(withoutCA.bind(dc.bindDN, dc.password), { code: /CERT|SIGNATURE/ });
});

t.test("a simple bind over plain ldap:// is refused: strong auth required (8)", async (t) => {
  const client = new Client({ url: dc.plainUrl, timeout: 10_000 });
  t.teardown(() => client.unbind());
  const refused = await client.bind(dc.bindDN, dc.password).then(
    () => undefined,
    (error: unknown) => error,
  );
  t.type(refused, StrongAuthRequiredError);
  t.equal((refused as StrongAuthRequiredError).code, 8);
});

t.test("the users ldbadd loaded have a 16-byte objectGUID and a SID in the domain", async (t) => {
  const client = await administrator(dc);
  t.teardown(() => client.unbind());
  const domain = await client.search(dc.base, {
    scope: "base",
    attributes: ["objectSid"],
    explicitBufferAttributes: ["objectSid"],
  });
  const domainSid = domain.searchEntries[0]?.objectSid as Buffer;
  t.equal(domainSid.length, 24, "S-1-5-21-a-b-c");

  const { searchEntries } = await client.search(dc.base, {
    filter: "(&(objectClass=user)(sAMAccountName=user*))",
    attributes: ["sAMAccountName", "objectGUID", "objectSid", "memberOf"],
    explicitBufferAttributes: ["objectGUID", "objectSid"],
    paged: { pageSize: 1000 },
  });
  t.equal(searchEntries.length, USERS, "every loaded user");
  const guids = new Set<string>();
  const rids = new Set<number>();
  let wrong = 0;
  for (const entry of searchEntries) {
    const guid = entry.objectGUID as Buffer;
    const sid = entry.objectSid as Buffer;
    if (!Buffer.isBuffer(guid) || guid.length !== 16) wrong++;
    // revision 1, five sub-authorities (the domain has four), then the domain's own, then the RID
    const inDomain = sid.subarray(2, 24).equals(domainSid.subarray(2));
    if (!Buffer.isBuffer(sid) || sid.length !== 28 || sid[0] !== 1 || sid[1] !== 5 || !inDomain)
      wrong++;
    guids.add(guid.toString("hex"));
    rids.add(sid.readUInt32LE(24));
  }
  t.equal(
    wrong,
    0,
    "each has a 16-byte objectGUID and a SID of five sub-authorities in the domain",
  );
  t.equal(guids.size, USERS, "the GUIDs differ");
  t.equal(rids.size, USERS, "so do the RIDs");
  t.equal(searchEntries[0]?.memberOf, everyone, "the group's back link, memberOf, is there");
});

t.test("a group of 5,000 members is read whole, and in ranges when asked", async (t) => {
  const client = await administrator(dc);
  t.teardown(() => client.unbind());
  const read = async (attribute: string): Promise<Entry> => {
    const { searchEntries } = await client.search(everyone, {
      scope: "base",
      attributes: [attribute],
    });
    return searchEntries[0]!;
  };
  const whole = (await read("member")).member as string[];
  t.equal(whole.length, USERS, "Samba answers every value when no range is asked for");

  const ranges: string[] = [];
  const ranged: string[] = [];
  for (let from = 0; ;) {
    const entry = await read(`member;range=${from}-${from + 1499}`);
    const name = Object.keys(entry).find((key) => key.toLowerCase().startsWith("member;range="));
    if (name === undefined) throw new Error(`no member;range= in ${Object.keys(entry).join()}`);
    ranges.push(name);
    ranged.push(...[entry[name]!].flat().map(String));
    const end = /-(\d+|\*)$/.exec(name)![1]!;
    if (end === "*") break;
    from = Number(end) + 1;
  }
  t.same(ranges, [
    "member;range=0-1499",
    "member;range=1500-2999",
    "member;range=3000-4499",
    "member;range=4500-*",
  ]);
  t.same(ranged.toSorted(), whole.toSorted(), "the ranges together are the whole");
});

t.test("the root DSE names its schema and supports DirSync and Show Deleted", async (t) => {
  const client = await administrator(dc);
  t.teardown(() => client.unbind());
  const { searchEntries } = await client.search("", {
    scope: "base",
    attributes: ["subschemaSubentry", "supportedControl", "defaultNamingContext"],
  });
  const root = searchEntries[0]!;
  t.equal(root.subschemaSubentry, `CN=Aggregate,CN=Schema,CN=Configuration,${SAMBA_BASE}`);
  t.equal(root.defaultNamingContext, SAMBA_BASE);
  const controls = [root.supportedControl].flat();
  t.ok(controls.includes("1.2.840.113556.1.4.841"), "DirSync");
  t.ok(controls.includes("1.2.840.113556.1.4.417"), "Show Deleted");
});

// Last: it stops the DC the tests above share.
t.test("a DC for an address another DC holds waits for it, then takes it", async (t) => {
  const address = new URL(dc.url).hostname;
  let waitedFor: string | undefined;
  let onWait = () => {};
  const waiting = new Promise<void>((resolve) => (onWait = resolve));
  const second = startSambaDC({
    addresses: [address],
    onWait: (on) => {
      waitedFor = on;
      onWait();
    },
  });
  t.teardown(async () => (await second.catch(() => undefined))?.stop());
  const first = await Promise.race([
    waiting.then(() => "waits"),
    second.then(() => "started at once"),
  ]);
  t.equal(first, "waits", "the second start waits while the first DC holds the address");
  t.equal(waitedFor, address);

  await dc.stop();
  t.throws(() => process.kill(dc.pid, 0), "the first samba is gone");
  t.notOk(existsSync(dc.dataDir), "its directory is removed");

  const next = await second;
  t.equal(next.url, dc.url, "the same address, now the second DC's");
  t.ok(next.timings.lockWaitMs > 0, "it waited for the lock");
  const client = await administrator(next);
  await client.unbind();
  await next.stop();
  t.notOk(existsSync(next.dataDir), "the second DC's directory is removed on stop");
});
