import { existsSync } from "node:fs";
import { Attribute, Change, Client } from "ldapts";
import t, { type Test } from "tap";
import { startDirsrv, type Dirsrv } from "./dirsrv.ts";

const carol = (ds: Dirsrv) => `uid=carol,ou=people,${ds.base}`;

async function boundClient(t: Test, ds: Dirsrv): Promise<Client> {
  const client = new Client({ url: ds.url, timeout: 10_000 });
  t.teardown(() => client.unbind());
  await client.bind(ds.bindDN, ds.password);
  return client;
}

async function addCarol(client: Client, ds: Dirsrv): Promise<void> {
  await client.add(carol(ds), {
    objectClass: ["inetOrgPerson"],
    uid: "carol",
    cn: "Carol Meyer",
    sn: "Meyer",
  });
}

t.test(
  "a stock 389 answers on loopback, holds the seed, names entries by nsUniqueId only",
  async (t) => {
    const ds = await startDirsrv({
      seedLdif:
        "dn: uid=alice,ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\nuid: alice\ncn: Alice\nsn: Smith\n",
    });
    t.teardown(() => ds.stop());
    t.match(ds.url, /^ldap:\/\/127\.0\.0\.1:\d+\/$/);
    t.equal(ds.identity, "nsUniqueId");
    t.comment(`389 (stock) started in ${ds.timings.startMs} ms, seeded in ${ds.timings.seedMs} ms`);
    const client = await boundClient(t, ds);

    const found = await client.search(ds.base, { filter: "(objectClass=*)", attributes: ["1.1"] });
    t.same(found.searchEntries.map((e) => e.dn).sort(), [
      "dc=example,dc=org",
      "ou=groups,dc=example,dc=org",
      "ou=people,dc=example,dc=org",
      "ou=services,dc=example,dc=org",
      "uid=alice,ou=people,dc=example,dc=org",
    ]);

    await addCarol(client, ds);
    const { searchEntries } = await client.search(carol(ds), {
      scope: "base",
      attributes: ["entryUUID", "nsUniqueId"],
    });
    t.match(searchEntries[0]?.nsUniqueId, /^[0-9a-f]{8}(-[0-9a-f]{8}){3}$/, "8-8-8-8 hex");
    t.same(searchEntries[0]?.entryUUID, [], "no entryUUID without the plugin");

    const root = await client.search("", { scope: "base", attributes: ["changelog"] });
    t.same(root.searchEntries[0]?.changelog, [], "no changelog unless asked for");
    await stopped(t, ds);
  },
);

t.test("with the entryUUID plugin, new entries and the seed have an entryUUID", async (t) => {
  const ds = await startDirsrv({ entryUUID: true });
  t.teardown(() => ds.stop());
  t.equal(ds.identity, "entryUUID");
  t.comment(`389 (entryUUID) started in ${ds.timings.startMs} ms`);
  const client = await boundClient(t, ds);
  await addCarol(client, ds);
  const { searchEntries } = await client.search(ds.base, {
    filter: "(objectClass=*)",
    attributes: ["entryUUID", "nsUniqueId"],
  });
  t.equal(searchEntries.length, 5);
  for (const entry of searchEntries) {
    t.match(
      entry.entryUUID,
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      entry.dn,
    );
    t.match(entry.nsUniqueId, /^[0-9a-f]{8}(-[0-9a-f]{8}){3}$/, `${entry.dn} keeps its nsUniqueId`);
  }
});

t.test("with the Retro Changelog, a modify is logged with its entry's entryUUID", async (t) => {
  const ds = await startDirsrv({ entryUUID: true, changelog: true });
  t.teardown(() => ds.stop());
  t.comment(`389 (entryUUID, changelog) started in ${ds.timings.startMs} ms`);
  const client = await boundClient(t, ds);
  const root = await client.search("", {
    scope: "base",
    attributes: ["changelog", "firstchangenumber", "lastchangenumber"],
  });
  t.match(
    root.searchEntries[0],
    { changelog: "cn=changelog", firstchangenumber: "1", lastchangenumber: "4" },
    "the seed's four adds come first",
  );

  await addCarol(client, ds);
  await client.modify(
    carol(ds),
    new Change({
      operation: "replace",
      modification: new Attribute({ type: "sn", values: ["Jones"] }),
    }),
  );
  const entry = await client.search(carol(ds), {
    scope: "base",
    attributes: ["entryUUID", "nsUniqueId"],
  });
  const log = await client.search("cn=changelog", {
    scope: "one",
    filter: `(targetDn=${carol(ds)})`,
    attributes: [
      "changeNumber",
      "changeType",
      "targetEntryUUID",
      "targetUniqueId",
      "changes",
      "changeTime",
    ],
  });
  const records = log.searchEntries.sort((a, b) => Number(a.changeNumber) - Number(b.changeNumber));
  t.same(
    records.map((r) => [r.changeNumber, r.changeType]),
    [
      ["5", "add"],
      ["6", "modify"],
    ],
  );
  const modify = records[1];
  t.equal(modify?.targetEntryUUID, entry.searchEntries[0]?.entryUUID, "the entry's entryUUID");
  t.equal(modify?.targetUniqueId, entry.searchEntries[0]?.nsUniqueId, "and its nsUniqueId");
  t.match(String(modify?.changes), /^replace: sn\nsn: Jones\n-\n/, "the change as LDIF");
  t.match(modify?.changeTime, /^\d{14}Z$/, "changeTime in whole seconds");
});

t.test("a stock 389's changelog names the entry by targetUniqueId", async (t) => {
  const ds = await startDirsrv({ changelog: true });
  t.teardown(() => ds.stop());
  const client = await boundClient(t, ds);
  await addCarol(client, ds);
  const entry = await client.search(carol(ds), { scope: "base", attributes: ["nsUniqueId"] });
  const log = await client.search("cn=changelog", {
    scope: "one",
    filter: `(targetDn=${carol(ds)})`,
    attributes: ["changeType", "targetEntryUUID", "targetUniqueId"],
  });
  t.equal(log.searchEntries.length, 1);
  t.equal(log.searchEntries[0]?.targetUniqueId, entry.searchEntries[0]?.nsUniqueId);
  t.same(log.searchEntries[0]?.targetEntryUUID, [], "no entryUUID to log");
});

t.test("another suffix gets its own entry and branches", async (t) => {
  const ds = await startDirsrv({ suffix: "o=acme" });
  t.teardown(() => ds.stop());
  const client = await boundClient(t, ds);
  const found = await client.search("o=acme", { scope: "one", attributes: ["1.1"] });
  t.same(found.searchEntries.map((e) => e.dn).sort(), [
    "ou=groups,o=acme",
    "ou=people,o=acme",
    "ou=services,o=acme",
  ]);
  const root = await client.search("", { scope: "base", attributes: ["namingContexts"] });
  t.equal(root.searchEntries[0]?.namingContexts, "o=acme");
});

t.test(
  "restart() runs ns-slapd again on its directory and port, with the plugins switched on meanwhile",
  async (t) => {
    const ds = await startDirsrv();
    t.teardown(() => ds.stop());
    const before = { pid: ds.pid, url: ds.url };
    const first = new Client({ url: ds.url, timeout: 10_000 });
    await first.bind(ds.bindDN, ds.password);
    await addCarol(first, ds);
    await first.modify(
      "cn=Retro Changelog Plugin,cn=plugins,cn=config",
      new Change({
        operation: "replace",
        modification: new Attribute({ type: "nsslapd-pluginEnabled", values: ["on"] }),
      }),
    );
    await first.unbind();

    await ds.restart();
    t.not(ds.pid, before.pid, "a new ns-slapd");
    t.throws(() => process.kill(before.pid, 0), "the one before is gone");
    t.equal(ds.url, before.url, "on the same port");
    const client = await boundClient(t, ds);
    const root = await client.search("", { scope: "base", attributes: ["changelog"] });
    t.equal(root.searchEntries[0]?.changelog, "cn=changelog", "the plugin switched on is running");
    // 389 adds the entryUUID plugin's two entries (which Debian's template lacks) at its first
    // start, switched on, and runs the plugin from the next: a restart turns it on.
    const dave = `uid=dave,ou=people,${ds.base}`;
    await client.add(dave, { objectClass: ["inetOrgPerson"], uid: "dave", cn: "Dave", sn: "Ng" });
    const names = async (dn: string) =>
      (await client.search(dn, { scope: "base", attributes: ["entryUUID"] })).searchEntries[0];
    t.same((await names(carol(ds)))?.entryUUID, [], "carol, made before it, has no entryUUID");
    t.match((await names(dave))?.entryUUID, /^[0-9a-f-]{36}$/, "dave, made after, has one");
    await stopped(t, ds);
  },
);

async function stopped(t: Test, ds: Dirsrv): Promise<void> {
  await ds.stop();
  t.throws(() => process.kill(ds.pid, 0), "ns-slapd is gone");
  t.notOk(existsSync(ds.dataDir), "its directory is removed");
}
