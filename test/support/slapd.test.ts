import { existsSync } from "node:fs";
import { Attribute, Change, Client } from "ldapts";
import t, { type Test } from "tap";
import { sampleEntries, sampleLdif, startDemoDirectory } from "../../src/demo/index.ts";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  baseEntries,
  launchSlapd,
  SLAPD_ROOT_DN,
  sshaPassword,
  toLdif,
  toLdifChunks,
} from "../../src/slapd/index.ts";
import { ProxiedAuthorizationControl } from "../../src/directory/index.ts";
import { freePort } from "../../src/ports.ts";
import { startSlapd } from "./slapd.ts";

t.test("a private slapd records an add in its accesslog and goes away on stop", async (t) => {
  // Started means answering: the bind below is the first request it gets. (How fast it
  // starts is for the benchmarks; a bound on it here failed on a loaded machine.)
  const slapd = await startSlapd();
  t.match(slapd.url, /^ldap:\/\/127\.0\.0\.1:\d+\/$/);

  const client = new Client({ url: slapd.url, timeout: 5000 });
  t.teardown(() => client.unbind());
  await client.bind(slapd.bindDN, slapd.password);

  const base = await client.search(slapd.base, { scope: "one", attributes: ["ou"] });
  t.same(base.searchEntries.map((e) => e.dn).sort(), [
    "ou=groups,dc=example,dc=org",
    "ou=people,dc=example,dc=org",
    "ou=services,dc=example,dc=org",
  ]);

  const dn = "uid=carol,ou=people,dc=example,dc=org";
  await client.add(dn, {
    objectClass: ["inetOrgPerson"],
    uid: "carol",
    cn: "Carol Meyer",
    sn: "Meyer",
  });
  const { searchEntries } = await client.search(dn, {
    scope: "base",
    attributes: ["cn", "entryUUID"],
  });
  t.equal(searchEntries[0]?.cn, "Carol Meyer");
  const entryUUID = searchEntries[0]?.entryUUID;

  const log = await client.search("cn=accesslog", {
    filter: "(&(objectClass=auditWriteObject)(reqDN=uid=carol,ou=people,dc=example,dc=org))",
    attributes: ["reqType", "reqDN", "reqMod", "reqOld", "reqEntryUUID", "reqStart", "reqAuthzID"],
  });
  t.equal(log.searchEntries.length, 1, "one record for the add");
  const record = log.searchEntries[0];
  t.equal(record?.reqType, "add");
  t.equal(record?.reqDN, dn);
  t.ok((record?.reqMod as string[]).includes("cn:+ Carol Meyer"), "reqMod lists the added values");
  t.same(record?.reqOld, [], "an add has no old values");
  t.equal(record?.reqEntryUUID, entryUUID);
  t.match(record?.reqStart, /^\d{14}\.\d{6}Z$/);
  t.equal(record?.reqAuthzID, slapd.bindDN);

  await stop(t, slapd);
});

t.test("a modify with proxied authorization is logged under the assumed identity", async (t) => {
  const slapd = await startSlapd({
    seedLdif:
      "dn: uid=alice,ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\nuid: alice\ncn: Alice\nsn: Smith\n",
  });
  t.teardown(() => slapd.stop());
  const client = new Client({ url: slapd.url, timeout: 5000 });
  t.teardown(() => client.unbind());
  await client.bind(slapd.bindDN, slapd.password);

  const alice = "uid=alice,ou=people,dc=example,dc=org";
  await client.modify(
    alice,
    new Change({
      operation: "replace",
      modification: new Attribute({ type: "sn", values: ["Jones"] }),
    }),
    new ProxiedAuthorizationControl(`dn:${alice}`),
  );
  const log = await client.search("cn=accesslog", {
    filter: "(reqType=modify)",
    attributes: ["reqAuthzID", "reqMod", "reqOld", "reqControls"],
  });
  const record = log.searchEntries[0];
  t.equal(record?.reqAuthzID, alice, "reqAuthzID is the proxied DN, without its dn: prefix");
  t.ok((record?.reqMod as string[]).includes("sn:= Jones"));
  t.ok((record?.reqOld as string[]).includes("sn: Smith"), "logold keeps the replaced value");
  t.match(String(record?.reqControls), /2\.16\.840\.1\.113730\.3\.4\.18 criticality TRUE/);
  const modified = await client.search(alice, { scope: "base", attributes: ["modifiersName"] });
  t.equal(modified.searchEntries[0]?.modifiersName, alice);
});

t.test("an entry marked employeeType: disabled cannot bind until the mark goes", async (t) => {
  const dn = "uid=dora,ou=people,dc=example,dc=org";
  const slapd = await startSlapd({
    seedLdif: `dn: ${dn}\nobjectClass: inetOrgPerson\nuid: dora\ncn: Dora\nsn: D\nemployeeType: employee\nuserPassword: ${sshaPassword("dora-pw")}\n`,
  });
  t.teardown(() => slapd.stop());
  const admin = new Client({ url: slapd.url, timeout: 5000 });
  t.teardown(() => admin.unbind());
  await admin.bind(slapd.bindDN, slapd.password);
  const binds = async () => {
    const client = new Client({ url: slapd.url, timeout: 5000 });
    try {
      await client.bind(dn, "dora-pw");
      return true;
    } catch (error) {
      t.equal((error as { code?: number }).code, 49, "refused as invalid credentials");
      return false;
    } finally {
      await client.unbind();
    }
  };
  const mark = (operation: "add" | "delete") =>
    admin.modify(
      dn,
      new Change({
        operation,
        modification: new Attribute({ type: "employeeType", values: ["disabled"] }),
      }),
    );
  t.equal(await binds(), true);
  await mark("add");
  t.equal(await binds(), false, "disabled: the password no longer works");
  await mark("delete");
  t.equal(await binds(), true, "the mark gone, the same password works again");
});

t.test("a given data directory is kept and not seeded twice", async (t) => {
  const dataDir = t.testdir();
  const first = await startSlapd({ dataDir });
  const client = new Client({ url: first.url, timeout: 5000 });
  await client.bind(first.bindDN, first.password);
  await client.add("cn=kept,ou=groups,dc=example,dc=org", {
    objectClass: "organizationalRole",
    cn: "kept",
  });
  await client.unbind();
  await first.stop();

  const second = await startSlapd({ dataDir });
  t.teardown(() => second.stop());
  const again = new Client({ url: second.url, timeout: 5000 });
  t.teardown(() => again.unbind());
  await again.bind(second.bindDN, second.password);
  const kept = await again.search("cn=kept,ou=groups,dc=example,dc=org", { scope: "base" });
  t.equal(kept.searchEntries.length, 1, "the entry added before the restart is there");
});

t.test("the demo directory loads the sample organisation once and keeps it", async (t) => {
  t.equal(sampleLdif(), sampleLdif(), "the sample data is the same on every run");
  const dataDir = t.testdir();
  const port = await freePort();
  const demo = await startDemoDirectory({ dataDir, port, password: "demo-secret" });
  if ("unavailable" in demo) throw new Error(demo.unavailable);
  t.equal(demo.url, `ldap://127.0.0.1:${port}/`);
  const client = new Client({ url: demo.url, timeout: 5000 });
  await client.bind("uid=svc-annal,ou=services,dc=example,dc=org", "demo-secret");
  const people = await client.search("ou=people,dc=example,dc=org", {
    filter: "(objectClass=inetOrgPerson)",
    attributes: ["uid", "description", "jpegPhoto"],
    explicitBufferAttributes: ["jpegPhoto"],
    paged: true,
  });
  t.equal(people.searchEntries.length, 301, "300 in four departments, and the managing director");
  t.ok(
    people.searchEntries.some((e) => e.uid === "hbrandt"),
    "the heads' manager",
  );
  t.ok(
    people.searchEntries.some((e) => Buffer.isBuffer(e.jpegPhoto)),
    "some people have a photo",
  );
  t.match(people.searchEntries[0]?.description, /^en~.+\|de~.+\|fr~.+$/);
  await client.modify(
    "uid=svc-annal,ou=services,dc=example,dc=org",
    new Change({
      operation: "replace",
      modification: new Attribute({ type: "description", values: ["changed"] }),
    }),
  );
  await client.unbind();
  await demo.stop();

  const again = await startDemoDirectory({ dataDir, port, password: "demo-secret" });
  if ("unavailable" in again) throw new Error(again.unavailable);
  t.teardown(() => again.stop());
  const check = new Client({ url: again.url, timeout: 5000 });
  t.teardown(() => check.unbind());
  await check.bind(SLAPD_ROOT_DN, "demo-secret");
  const svc = await check.search("uid=svc-annal,ou=services,dc=example,dc=org", {
    scope: "base",
    attributes: ["description"],
  });
  t.equal(svc.searchEntries[0]?.description, "changed", "a restart keeps changes, no reseed");
});

t.test("a seed given in pieces loads as the same seed in one string would", async (t) => {
  const entries = [...baseEntries(), ...sampleEntries({ people: 2500 })];
  t.equal([...toLdifChunks(entries)].length, 3, "a piece per thousand entries");
  t.equal([...toLdifChunks(entries)].join(""), toLdif(entries), "the same LDIF");
  const password = "seed-in-pieces";
  const slapd = await launchSlapd({
    dir: await mkdtemp(join(tmpdir(), "annal-slapd-pieces-")),
    rootPassword: password,
    seedLdif: () => toLdifChunks(entries),
    removeOnStop: true,
  });
  t.teardown(() => slapd.stop());
  const client = new Client({ url: slapd.url, timeout: 10_000 });
  t.teardown(() => client.unbind());
  await client.bind(SLAPD_ROOT_DN, password);
  const { searchEntries } = await client.search("dc=example,dc=org", {
    filter: "(objectClass=*)",
    attributes: ["1.1"],
    paged: { pageSize: 1000 },
  });
  t.equal(searchEntries.length, entries.length, "every entry is in the directory");
});

async function stop(
  t: Test,
  slapd: { pid: number; dataDir: string; stop(): Promise<void> },
): Promise<void> {
  await slapd.stop();
  t.throws(() => process.kill(slapd.pid, 0), "slapd is gone");
  t.notOk(existsSync(slapd.dataDir), "its temporary directory is removed");
}
