import t, { type Test } from "tap";
import { captureOnce, readCaptureCheckpoint } from "../../src/capture/index.ts";
import { canonicalIdentity } from "../../src/directory/index.ts";
import { directoryCaptureFixture, person } from "../support/capture.ts";
import { startDirsrv, type Dirsrv } from "../support/dirsrv.ts";
import { feed } from "../support/history.ts";

/**
 * Capture in front of 389 Directory Server, as Debian ships it (entries named only by
 * nsUniqueId) and with its entryUUID plugin: the import, the Retro Changelog as the change
 * source, poll capture, and the refusals where something is missing.
 */
const PEOPLE = "ou=people,dc=example,dc=org";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function dirsrv(
  t: Test,
  options: { entryUUID?: boolean; changelog?: boolean } = {},
): Promise<Dirsrv> {
  const ds = await startDirsrv(options);
  t.teardown(() => ds.stop());
  return ds;
}

/** Two modifies of one entry within one second, as 389 stamps them (retried if not). */
async function twoWritesInOneSecond(
  f: Awaited<ReturnType<typeof directoryCaptureFixture>>,
  dn: string,
  between?: () => Promise<unknown>,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await f.directory.modify(dn, [{ operation: "replace", attribute: "title", values: "First" }]);
    const first = (await f.directory.get(dn, { attributes: ["modifyTimestamp"] }))?.attributes
      .modifyTimestamp?.[0];
    await between?.();
    await f.directory.modify(dn, [{ operation: "replace", attribute: "title", values: "Second" }]);
    const second = (await f.directory.get(dn, { attributes: ["modifyTimestamp"] }))?.attributes
      .modifyTimestamp?.[0];
    if (String(first) === String(second)) return;
    if (attempt === 5) throw new Error("no two writes fell in one second in five tries");
  }
}

for (const entryUUID of [false, true]) {
  const kind = entryUUID ? "with its entryUUID plugin" : "as Debian ships it (nsUniqueId only)";

  t.test(`389 ${kind}: the changelog gives every write, in order, by whom`, async (t) => {
    const ds = await dirsrv(t, { entryUUID, changelog: true });
    const f = await directoryCaptureFixture(t, { server: ds, source: "changelog" });
    await f.sync();
    const imported = await f.db.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM events WHERE type = 'EntrySnapshot'",
    );
    t.ok(Number(imported.rows[0]!.n) >= 4, "the import stored the suffix and its ous");

    const dn = `uid=ada,${PEOPLE}`;
    await f.directory.add(dn, person("ada"));
    const names = (await f.directory.get(dn, { attributes: ["entryUUID", "nsUniqueId"] }))!
      .attributes;
    const identity = entryUUID
      ? String(names.entryUUID?.[0])
      : canonicalIdentity("nsUniqueId", String(names.nsUniqueId?.[0] ?? names.nsuniqueid?.[0]));
    t.equal(names.entryUUID === undefined, !entryUUID, "entryUUID only with the plugin");
    await twoWritesInOneSecond(f, dn);
    await f.directory.modifyDN(dn, "uid=ada2");
    await f.directory.delete(`uid=ada2,${PEOPLE}`);
    await f.sync();

    const changes = await feed(f.db.pool);
    t.same(
      changes.map((c) => [c.change_type, c.dn]),
      [
        ["add", dn],
        ["modify", dn],
        ["modify", dn],
        ["modrdn", `uid=ada2,${PEOPLE}`],
        ["delete", `uid=ada2,${PEOPLE}`],
      ],
      "both writes of one second, in order",
    );
    t.same(
      changes.filter((c) => c.change_type === "modify").map((c) => c.patch),
      [
        [{ op: "add", path: "/title", value: ["First"] }],
        [{ op: "replace", path: "/title/0", value: "Second" }],
      ],
    );
    const ids = new Set(changes.map((c) => c.entry_uuid));
    t.same([...ids], [identity], "one entry through its rename, by the server's identity");
    t.match(identity, UUID);
    t.same(
      changes.map((c) => c.actor),
      [
        "cn=directory manager",
        "cn=directory manager",
        "cn=directory manager",
        "cn=directory manager",
        null,
      ],
      "the author from modifiersName; a delete's is not in the changelog, and none is made up",
    );
    t.ok(Number(await readCaptureCheckpoint(f.db.pool, "changelog")) > 0, "a change number");
    t.equal(await f.sync(), 0, "a pass after records nothing again");
  });

  t.test(`389 ${kind}: poll capture records two writes in one second, in order`, async (t) => {
    const ds = await dirsrv(t, { entryUUID });
    const f = await directoryCaptureFixture(t, { server: ds, source: "poll" });
    await f.sync();
    const dn = `uid=bea,${PEOPLE}`;
    await f.directory.add(dn, person("bea"));
    await f.sync();
    // Polling records the states it reads: a pass between the writes reads the first.
    await twoWritesInOneSecond(f, dn, () => captureOnce(f.context, "poll"));
    await f.sync();
    t.same(
      (await feed(f.db.pool)).filter((c) => c.change_type === "modify").map((c) => c.patch),
      [
        [{ op: "add", path: "/title", value: ["First"] }],
        [{ op: "replace", path: "/title/0", value: "Second" }],
      ],
    );
  });
}

t.test("389 refuses what it does not have: an accesslog, a changelog, entryUUID", async (t) => {
  const ds = await dirsrv(t);
  const accesslog = await directoryCaptureFixture(t, { server: ds, source: "accesslog" });
  await t.rejects(captureOnce(accesslog.context, "accesslog"), {
    code: "ANNAL_CAPTURE_SOURCE_MISSING",
  });
  const changelog = await directoryCaptureFixture(t, { server: ds, source: "changelog" });
  await t.rejects(captureOnce(changelog.context, "changelog"), {
    code: "ANNAL_CAPTURE_SOURCE_MISSING",
  });
  const byEntryUUID = await directoryCaptureFixture(t, {
    server: ds,
    source: "poll",
    identity: "entryUUID",
  });
  await t.rejects(captureOnce(byEntryUUID.context, "poll"), {
    code: "ANNAL_IMPORT_STORED_NOTHING",
  });
  t.equal(await readCaptureCheckpoint(byEntryUUID.db.pool, "poll"), undefined, "nothing stored");
});
