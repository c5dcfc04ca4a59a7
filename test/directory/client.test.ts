import t, { type Test } from "tap";
import { toLdif, type LdifEntry } from "../../src/slapd/index.ts";
import {
  createDirectoryClient,
  DirectoryError,
  eq,
  present,
  type DirectoryClientOptions,
  type DirectoryEntry,
} from "../../src/directory/index.ts";
import type { FilterNode } from "../../src/filters/index.ts";
import { startSlapd, type Slapd } from "../support/slapd.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";
import { eventually } from "../support/eventually.ts";

const PEOPLE = "ou=people,dc=example,dc=org";
const ALICE = `uid=alice,${PEOPLE}`;

function seed(): string {
  const entries: LdifEntry[] = [];
  for (let i = 1; i <= 250; i++) {
    const uid = `user${String(i).padStart(3, "0")}`;
    entries.push({
      dn: `uid=${uid},${PEOPLE}`,
      attributes: { objectClass: ["inetOrgPerson"], uid: [uid], cn: [`User ${i}`], sn: ["Paged"] },
    });
  }
  entries.push(
    {
      dn: ALICE,
      attributes: { objectClass: ["inetOrgPerson"], uid: ["alice"], cn: ["Alice"], sn: ["Smith"] },
    },
    {
      dn: "uid=svc-plain,ou=services,dc=example,dc=org",
      attributes: {
        objectClass: ["account", "simpleSecurityObject"],
        uid: ["svc-plain"],
        userPassword: ["plain-secret"],
      },
    },
    {
      dn: "uid=svc-proxy,ou=services,dc=example,dc=org",
      attributes: {
        objectClass: ["account", "simpleSecurityObject"],
        uid: ["svc-proxy"],
        userPassword: ["proxy-secret"],
        authzTo: [`dn.subtree:${PEOPLE}`],
      },
    },
  );
  return toLdif(entries);
}

const slapd: Slapd = await startSlapd({ seedLdif: seed() });
t.teardown(() => slapd.stop());

function client(options: Partial<DirectoryClientOptions> = {}) {
  const directory = createDirectoryClient({
    url: slapd.url,
    bindDN: slapd.bindDN,
    password: slapd.password,
    ...options,
  });
  t.teardown(() => directory.close());
  return directory;
}

async function rejects(
  t: Test,
  promise: Promise<unknown>,
  code: string,
  status: number,
): Promise<DirectoryError | undefined> {
  try {
    await promise;
    t.fail(`expected ${code}`);
    return undefined;
  } catch (error) {
    t.type(error, DirectoryError);
    t.match(error, { code, status }, code);
    return error as DirectoryError;
  }
}

t.test("search streams 250 entries in pages of 50", async (t) => {
  const directory = client();
  const sizes: number[] = [];
  const uids = new Set<string>();
  for await (const page of directory.search(PEOPLE, {
    scope: "one",
    filter: eq("sn", "Paged"),
    attributes: ["uid"],
    pageSize: 50,
  })) {
    sizes.push(page.length);
    for (const entry of page) uids.add(String(entry.attributes.uid?.[0]));
  }
  t.same(sizes, [50, 50, 50, 50, 50]);
  t.equal(uids.size, 250);
});

t.test("a search reads one page ahead of its consumer, never more", async (t) => {
  const proxy = await startTcpProxy(slapd.url);
  t.teardown(() => proxy.close());
  const directory = client({ url: proxy.url });
  const PAGED_RESULTS = "1.2.840.113556.1.4.319"; // in each page's request and its answer
  const count = (bytes: Buffer) => bytes.toString("latin1").split(PAGED_RESULTS).length - 1;
  // The page limit ends the frozen third page; it is long enough for a loaded machine's
  // answer to the first two.
  const pages = directory.search(PEOPLE, {
    filter: eq("sn", "Paged"),
    pageSize: 50,
    timeoutMs: 3000,
  });
  const first = await pages.next();
  t.equal((first.value as DirectoryEntry[]).length, 50, "the first page arrives");
  await eventually(() => count(proxy.sentByServer()) >= 2, { what: "the second page's answer" });
  t.equal(count(proxy.sentByClients()), 2, "the second page was asked for, and no third");
  proxy.freeze();
  const second = await pages.next();
  t.equal((second.value as DirectoryEntry[]).length, 50, "the second page was already here");
  // Handing it over asked for the third, which the frozen directory never answers.
  await rejects(t, pages.next(), "ANNAL_LDAP_TIMEOUT", 504);
  proxy.thaw();
  t.ok(await directory.get(ALICE), "the pool recovers with a fresh connection");
});

t.test(
  "an unpaged search sends no paged-results control and stops at its size limit",
  async (t) => {
    const PAGED_RESULTS = "1.2.840.113556.1.4.319"; // RFC 2696; the OID travels as its text
    const proxy = await startTcpProxy(slapd.url);
    t.teardown(() => proxy.close());
    const directory = client({ url: proxy.url });
    const pages: DirectoryEntry[][] = [];
    for await (const page of directory.search(PEOPLE, {
      filter: eq("uid", "alice"),
      paged: false,
      sizeLimit: 2,
    })) {
      pages.push(page);
    }
    t.same(
      pages.map((page) => page.map((entry) => entry.dn)),
      [[ALICE]],
    );
    t.notOk(proxy.sentByClients().includes(PAGED_RESULTS), "no paged-results control was sent");
    const many: DirectoryEntry[] = [];
    for await (const page of directory.search(PEOPLE, {
      filter: eq("sn", "Paged"),
      paged: false,
      sizeLimit: 2,
    })) {
      many.push(...page);
    }
    t.equal(many.length, 2, "more matches than the size limit: the first ones, no error");
    for await (const page of directory.search(PEOPLE, { filter: eq("uid", "alice") })) {
      t.equal(page.length, 1);
    }
    t.ok(
      proxy.sentByClients().includes(PAGED_RESULTS),
      "a paged search sends it (the test sees it)",
    );
  },
);

t.test("leaving a search early frees its connection", async (t) => {
  const directory = client({ poolSize: 1 });
  for await (const page of directory.search(PEOPLE, { pageSize: 10 })) {
    t.equal(page.length, 10);
    break;
  }
  t.ok(await directory.get(ALICE), "the only connection is usable again");
});

t.test("a search asks for its next page while the caller works on this one", async (t) => {
  const proxy = await startTcpProxy(slapd.url);
  t.teardown(() => proxy.close());
  const directory = client({ url: proxy.url });
  const PAGED_RESULTS = "1.2.840.113556.1.4.319";
  const requests = () => proxy.sentByClients().toString("latin1").split(PAGED_RESULTS).length - 1;
  let pages = 0;
  for await (const page of directory.search(PEOPLE, { pageSize: 1 })) {
    if (page.length !== 1) t.fail(`a page of ${page.length}`);
    if (pages++ === 0) {
      await eventually(() => requests() >= 2, { what: "the second page's request" });
    }
  }
  t.ok(pages >= 2, `${pages} pages`);
  t.equal(requests(), pages, "one request a page: none asked twice, none after the last");
});

t.test("a connection killed under the pool is reopened and bound again", async (t) => {
  const proxy = await startTcpProxy(slapd.url);
  t.teardown(() => proxy.close());
  const directory = client({ url: proxy.url, poolSize: 1 });
  t.equal((await directory.get(ALICE))?.attributes.cn?.[0], "Alice");
  t.equal(proxy.connectionCount, 1);

  proxy.killConnections();
  t.equal((await directory.get(ALICE))?.attributes.cn?.[0], "Alice", "reads work again");
  t.equal(proxy.connectionCount, 2, "on a new connection");
  await directory.modify(ALICE, [{ operation: "replace", attribute: "title", values: "Rebound" }]);
  t.same((await directory.get(ALICE, { attributes: ["title"] }))?.attributes.title, ["Rebound"]);
});

t.test("an operation the directory does not answer times out", async (t) => {
  const proxy = await startTcpProxy(slapd.url);
  t.teardown(() => proxy.close());
  const directory = client({ url: proxy.url });
  t.ok(await directory.get(ALICE));
  proxy.freeze();
  const started = performance.now();
  // It gives up (or this test hangs), by the operation's own limit: the message names it.
  const error = await rejects(
    t,
    directory.get(ALICE, { timeoutMs: 250 }),
    "ANNAL_LDAP_TIMEOUT",
    504,
  );
  const elapsed = performance.now() - started;
  t.match(error?.message, /within 250 ms/);
  // A lower bound only, which load cannot break: load makes waits longer, never shorter.
  t.ok(elapsed >= 240, `not before its limit: gave up after ${Math.round(elapsed)} ms`);
  proxy.thaw();
  t.ok(await directory.get(ALICE), "and the next operation works");
});

t.test("a wrong password is ANNAL_LDAP_BIND_FAILED with a message that says so", async (t) => {
  const directory = client({ password: "not-the-password" });
  const error = await rejects(t, directory.get(ALICE), "ANNAL_LDAP_BIND_FAILED", 502);
  t.match(error?.message, /refused the bind as "cn=admin,dc=example,dc=org": invalid credentials/);
  t.ok(error?.hint);
});

t.test("a directory that is not there is ANNAL_LDAP_UNAVAILABLE", async (t) => {
  const proxy = await startTcpProxy(slapd.url);
  const url = proxy.url;
  await proxy.close();
  const directory = client({ url });
  const error = await rejects(t, directory.get(ALICE), "ANNAL_LDAP_UNAVAILABLE", 503);
  t.match(error?.message, /cannot reach the directory at ldap:\/\/127\.0\.0\.1:\d+/);
});

t.test("writes as another identity are recorded with it in reqAuthzID", async (t) => {
  const directory = client();
  await directory.modify(
    ALICE,
    [{ operation: "replace", attribute: "description", values: "proxied" }],
    {
      as: ALICE,
    },
  );
  const records: DirectoryEntry[] = [];
  for await (const page of directory.search("cn=accesslog", {
    filter: eq("reqType", "modify"),
    attributes: ["reqAuthzID", "reqMod"],
  })) {
    records.push(...page);
  }
  const record = records.find((r) =>
    (r.attributes.reqMod as string[]).includes("description:= proxied"),
  );
  t.same(record?.attributes.reqAuthzID, [ALICE]);

  const plain = client({
    bindDN: "uid=svc-plain,ou=services,dc=example,dc=org",
    password: "plain-secret",
  });
  await rejects(
    t,
    plain.modify(ALICE, [{ operation: "replace", attribute: "description", values: "x" }], {
      as: ALICE,
    }),
    "ANNAL_LDAP_PROXY_DENIED",
    403,
  );
  const proxying = client({
    bindDN: "uid=svc-proxy,ou=services,dc=example,dc=org",
    password: "proxy-secret",
  });
  await proxying.modify(
    ALICE,
    [{ operation: "replace", attribute: "description", values: "via svc" }],
    {
      as: `dn:${ALICE}`,
    },
  );
  t.same(
    (await directory.get(ALICE, { attributes: ["modifiersName"] }))?.attributes.modifiersName,
    [ALICE],
  );
});

t.test("binary attributes come back as the exact bytes written", async (t) => {
  const directory = client();
  const dn = `uid=photo,${PEOPLE}`;
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0xff, 0xd9]);
  const utf8Looking = Buffer.from([0xef, 0xbb, 0xbf, 0x41]); // a BOM then "A": valid UTF-8
  await directory.add(dn, {
    objectClass: "inetOrgPerson",
    uid: "photo",
    cn: "Photo Person",
    sn: "Ström",
    jpegPhoto: [jpeg, utf8Looking],
  });
  const entry = await directory.get(dn, { binaryAttributes: ["JPEGPHOTO"] });
  const photos = entry?.attributes.jpegPhoto as Buffer[];
  t.ok(photos.every((p) => Buffer.isBuffer(p)));
  t.same(
    photos.map((p) => p.toString("hex")).sort(),
    [jpeg, utf8Looking].map((p) => p.toString("hex")).sort(),
  );
  t.same(entry?.attributes.sn, ["Ström"], "text stays text");
});

t.test("entries that are missing or already there get their own codes", async (t) => {
  const directory = client();
  t.equal(await directory.get(`uid=nobody,${PEOPLE}`), undefined, "get of a missing entry");
  await rejects(t, directory.delete(`uid=nobody,${PEOPLE}`), "ANNAL_LDAP_NO_SUCH_OBJECT", 404);
  await rejects(
    t,
    directory.add(ALICE, { objectClass: "inetOrgPerson", uid: "alice", cn: "A", sn: "S" }),
    "ANNAL_LDAP_ALREADY_EXISTS",
    409,
  );
  const violation = await rejects(
    t,
    directory.add(`uid=nosn,${PEOPLE}`, { objectClass: "inetOrgPerson", uid: "nosn", cn: "x" }),
    "ANNAL_LDAP_SCHEMA_VIOLATION",
    422,
  );
  t.match(violation?.message, /requires attribute 'sn'/, "the server's diagnostic is kept");
  await rejects(t, directory.delete(PEOPLE), "ANNAL_LDAP_NOT_A_LEAF", 409);
});

t.test("modifyDN renames and moves, even with escapes in the new RDN", async (t) => {
  const directory = client();
  await directory.add(`uid=mover,${PEOPLE}`, {
    objectClass: "inetOrgPerson",
    uid: "mover",
    cn: "M",
    sn: "V",
  });
  await directory.modifyDN(`uid=mover,${PEOPLE}`, "uid=moved\\, ok\\\\", {
    newSuperior: "ou=services,dc=example,dc=org",
  });
  const moved = await directory.get("uid=moved\\, ok\\\\,ou=services,dc=example,dc=org");
  t.same(moved?.attributes.uid, ["moved, ok\\"], "the old RDN value is replaced");
  await directory.modifyDN("uid=moved\\, ok\\\\,ou=services,dc=example,dc=org", "uid=renamed");
  t.ok(await directory.get("uid=renamed,ou=services,dc=example,dc=org"), "renamed in place");
  await directory.delete("uid=renamed,ou=services,dc=example,dc=org");
});

t.test("numeric-OID filters reach the server intact", async (t) => {
  const directory = client();
  const found: string[] = [];
  for await (const page of directory.search(PEOPLE, { filter: eq("2.5.4.4", "Smith") })) {
    found.push(...page.map((e) => e.dn));
  }
  t.same(found, [ALICE]);
});

t.test("matched values: only the values that match an item come back (RFC 3876)", async (t) => {
  const directory = client();
  const read = async (matchedValues?: FilterNode[]) => {
    const found: DirectoryEntry[] = [];
    for await (const page of directory.search("ou=services,dc=example,dc=org", {
      filter: eq("uid", "svc-plain"),
      attributes: ["objectClass", "uid", "userPassword"],
      ...(matchedValues ? { matchedValues } : {}),
    })) {
      found.push(...page);
    }
    return found.map((entry) => entry.attributes);
  };
  t.same(
    await read(),
    [
      {
        objectClass: ["account", "simpleSecurityObject"],
        uid: ["svc-plain"],
        userPassword: ["plain-secret"],
      },
    ],
    "without it, every value",
  );
  t.same(
    await read([eq("objectClass", "ACCOUNT"), present("uid")]),
    [{ objectClass: ["account"], uid: ["svc-plain"] }],
    "the value that matched (by the attribute's own rule), an attribute named whole, no other",
  );
});

t.test("the pool never opens more connections than its size", async (t) => {
  const proxy = await startTcpProxy(slapd.url);
  t.teardown(() => proxy.close());
  const directory = client({ url: proxy.url, poolSize: 2 });
  const results = await Promise.all(Array.from({ length: 12 }, () => directory.get(ALICE)));
  t.ok(results.every((entry) => entry?.dn === ALICE));
  t.equal(proxy.connectionCount, 2);
});

t.test(
  "a watch is told of each entry as it comes to match, until aborted (RFC 4533)",
  async (t) => {
    const proxy = await startTcpProxy(slapd.url);
    t.teardown(() => proxy.close());
    const directory = client({ url: proxy.url });
    const watched = `uid=watched,${PEOPLE}`;
    let told = 0;
    const stop = new AbortController();
    // The accesslog's entries of writes to one DN: none yet, so the refresh sends nothing.
    const watching = directory.watch("cn=accesslog", {
      scope: "one",
      filter: eq("reqDN", watched),
      signal: stop.signal,
      onEntry: () => told++,
    });
    await eventually(async () => proxy.connectionCount === 1 || undefined, {
      what: "the watch's connection is open",
    });
    await directory.add(watched, {
      objectClass: ["inetOrgPerson"],
      uid: "watched",
      cn: "W",
      sn: "W",
    });
    await eventually(async () => told === 1 || undefined, { what: "the add is told" });
    await directory.modify(watched, [{ operation: "replace", attribute: "sn", values: "V" }]);
    await directory.modify(ALICE, [{ operation: "replace", attribute: "sn", values: "Smith" }]);
    await directory.delete(watched);
    await eventually(async () => told === 3 || undefined, { what: "the modify and the delete" });
    t.equal(told, 3, "a write to another entry is not told");
    t.ok(await directory.get(ALICE), "the pool's connections serve operations meanwhile");

    stop.abort();
    t.equal(await watching, undefined, "an aborted watch returns");
  },
);

t.test("a watch whose connection is lost, or that the server will not keep, throws", async (t) => {
  const proxy = await startTcpProxy(slapd.url);
  t.teardown(() => proxy.close());
  const stop = new AbortController();
  t.teardown(() => stop.abort());
  const options = { filter: eq("reqDN", ALICE), signal: stop.signal, onEntry: () => {} };
  const watching = client({ url: proxy.url }).watch("cn=accesslog", options);
  await eventually(async () => proxy.connectionCount === 1 || undefined);
  proxy.killConnections();
  await rejects(t, watching, "ANNAL_LDAP_UNAVAILABLE", 503);
  // The people's database has no syncprov overlay: the critical control is refused.
  await rejects(
    t,
    client().watch("dc=example,dc=org", options),
    "ANNAL_LDAP_CONTROL_UNSUPPORTED",
    502,
  );
});

t.test("after close, operations fail with ANNAL_LDAP_CLOSED", async (t) => {
  const directory = client();
  t.ok(await directory.get(ALICE));
  await directory.close();
  await rejects(t, directory.get(ALICE), "ANNAL_LDAP_CLOSED", 503);
});
