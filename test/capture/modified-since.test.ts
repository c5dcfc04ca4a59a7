import t, { type Test } from "tap";
import {
  MODIFY_TIMESTAMP,
  modifiedAt,
  modifiedSince,
  pollTime,
} from "../../src/capture/modified-since.ts";
import {
  createDirectoryClient,
  ge,
  renderFilter,
  type DirectoryClient,
} from "../../src/directory/index.ts";
import type { FilterNode } from "../../src/filters/index.ts";
import { nextSecond } from "../support/clock.ts";
import { startDirsrv } from "../support/dirsrv.ts";
import { startSambaDC } from "../support/samba.ts";
import { startSlapd } from "../support/slapd.ts";

t.setTimeout(300_000);
type TlsSettings = NonNullable<Parameters<typeof createDirectoryClient>[0]["tls"]>;

t.test("the poll filter's time has a fraction of zero, the form every server reads", async (t) => {
  t.equal(
    renderFilter(modifiedSince(new Date("2026-11-22T04:35:00Z"))),
    "(modifyTimestamp>=20261122043500.0Z)",
  );
  t.equal(
    renderFilter(modifiedSince(new Date("2026-11-22T04:35:00.999Z"))),
    "(modifyTimestamp>=20261122043500.0Z)",
    "a finer moment is cut down to its second, which is then read again",
  );
});

t.test("a poll checkpoint is written to the whole second, with a fraction", async (t) => {
  t.equal(pollTime(new Date("2026-01-02T03:04:05.678Z")), "20260102030405.0Z");
});

t.test("an entry's modifyTimestamp is read whatever the server's spelling", async (t) => {
  const at = new Date("2026-11-22T04:35:00Z");
  for (const [name, value] of [
    ["modifyTimestamp", "20261122043500Z"],
    ["modifyTimeStamp", "20261122043500.0Z"],
    ["modifytimestamp", Buffer.from("20261122043500Z")],
  ] as const) {
    const entry = { dn: "uid=a", attributes: { [name]: [value] as string[] | Buffer[] } };
    t.same(modifiedAt(entry), at, name);
  }
  t.equal(modifiedAt({ dn: "uid=a", attributes: { cn: ["a"] } }), undefined, "none returned");
});

/**
 * The DNs `filter` finds under `base`, in lower case, as the poll pass asks (the directory's
 * own answer, not annal's reading of it).
 */
async function found(directory: DirectoryClient, base: string, filter: FilterNode) {
  const dns: string[] = [];
  for await (const page of directory.search(base, { scope: "sub", filter, attributes: ["1.1"] })) {
    dns.push(...page.map((entry) => entry.dn.toLowerCase()));
  }
  return dns;
}

/**
 * Each real server reads the filter's time as the moment it names: the entry written in the
 * second of `since` and after is found, one written before is not, nor is anything from a
 * second later. Against AD, the form without a fraction is also shown for what it does.
 */
async function readsTheFilter(
  t: Test,
  server: { url: string; bindDN: string; password: string; base: string; tls?: TlsSettings },
  dn: string,
): Promise<DirectoryClient> {
  const directory = createDirectoryClient({
    url: server.url,
    bindDN: server.bindDN,
    password: server.password,
    ...(server.tls ? { tls: server.tls } : {}),
  });
  t.teardown(() => directory.close());
  const since = await nextSecond();
  await directory.modify(dn, [{ operation: "replace", attribute: "description", values: "Now" }]);
  t.same(
    await found(directory, server.base, modifiedSince(since)),
    [dn.toLowerCase()],
    `${renderFilter(modifiedSince(since))} finds the entry written in that second, and only it`,
  );
  const later = await nextSecond();
  t.same(await found(directory, server.base, modifiedSince(later)), [], "and nothing a second on");
  return directory;
}

t.test("slapd reads the poll filter's time as the moment it names", async (t) => {
  const slapd = await startSlapd();
  t.teardown(() => slapd.stop());
  await readsTheFilter(t, slapd, `ou=people,${slapd.base}`);
});

t.test("389 Directory Server reads the poll filter's time as the moment it names", async (t) => {
  const ds = await startDirsrv();
  t.teardown(() => ds.stop());
  await readsTheFilter(t, ds, `ou=people,${ds.base}`);
});

t.test(
  "Samba's AD DC reads the poll filter's time as the moment it names, where the form without a fraction finds every entry",
  async (t) => {
    const dc = await startSambaDC();
    t.teardown(() => dc.stop());
    const administrator = `CN=Administrator,CN=Users,${dc.base}`;
    const directory = await readsTheFilter(
      t,
      { ...dc, tls: { caFile: dc.caFile, serverName: dc.serverName } },
      administrator,
    );
    const since = new Date(Date.now() + 3_600_000); // an hour on: nothing is that new
    const noFraction = ge(MODIFY_TIMESTAMP, pollTime(since).replace(".0Z", "Z"));
    t.ok(
      (await found(directory, dc.base, noFraction)).length > 100,
      `${renderFilter(noFraction)}, an hour from now, finds the domain's entries all the same`,
    );
    t.same(await found(directory, dc.base, modifiedSince(since)), [], "the poll's form finds none");
  },
);
