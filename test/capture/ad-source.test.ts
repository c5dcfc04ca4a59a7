import t, { type Test } from "tap";
import { randomUUID } from "node:crypto";
import {
  captureOnce,
  causedWrites,
  fullPassesIfDue,
  readCaptureCheckpoint,
} from "../../src/capture/index.ts";
import { parseADPlace } from "../../src/capture/ad.ts";
import { writeCaptureCheckpoint } from "../../src/capture/checkpoints.ts";
import type { Pool } from "../../src/db/index.ts";
import { guidText } from "../../src/directory/index.ts";
import { toLdif } from "../../src/slapd/index.ts";
import { directoryCaptureFixture, type DirectoryCaptureFixture } from "../support/capture.ts";
import { feed } from "../support/history.ts";
import { adGroup, adOrganizationalUnit, adUser, startSambaDC } from "../support/samba.ts";
import { startSlapd } from "../support/slapd.ts";

/**
 * Capture from Active Directory by uSNChanged (`source = "ad"`) against Samba's AD DC with its
 * default security (LDAPS, verified). One DC for the file (a start takes ~10 s and the
 * machine's loopback addresses are few); each test has its own database and its own entries.
 */
t.setTimeout(300_000);

const BASE = "DC=example,DC=test";
const PEOPLE = `OU=People,${BASE}`;
const ELSEWHERE = `OU=Elsewhere,${BASE}`;
const TYPES = [
  { name: "user", base: BASE, filter: "(objectClass=user)" },
  { name: "group", base: BASE, filter: "(objectClass=group)" },
];

const dc = await startSambaDC({
  seedLdif: toLdif([
    adOrganizationalUnit("People"),
    adOrganizationalUnit("Elsewhere"),
    ...["ada", "bob", "carl", "dora", "eve", "fay", "gus"].map((name) =>
      adUser(name, { parent: PEOPLE, attributes: { sn: [name] } }),
    ),
    adGroup("team", [`CN=ada,${PEOPLE}`], { parent: PEOPLE }),
    adOrganizationalUnit("Moving"),
    adUser("ivo", { parent: `OU=Moving,${BASE}` }),
    adOrganizationalUnit("Inner", `OU=Moving,${BASE}`),
    adUser("jon", { parent: `OU=Inner,OU=Moving,${BASE}` }),
  ]),
});
t.teardown(() => dc.stop());

const server = { ...dc, tls: { caFile: dc.caFile, serverName: dc.serverName } };

async function fixture(
  t: Test,
  log?: DirectoryCaptureFixture["context"]["log"],
): Promise<DirectoryCaptureFixture> {
  const f = await directoryCaptureFixture(t, { server, source: "ad", types: TYPES });
  await f.sync(); // the first start: the import, and the DC's place as the checkpoint
  return log ? { ...f, context: { ...f.context, log } } : f;
}

async function guidOf(f: DirectoryCaptureFixture, dn: string): Promise<string> {
  const entry = await f.directory.get(dn, { attributes: ["objectGUID"] });
  return guidText(entry!.attributes.objectGUID![0] as Buffer)!;
}

/** The entry events of one stream after its import, with their metadata. */
async function eventsOf(pool: Pool, uuid: string) {
  const result = await pool.query<{
    type: string;
    data: { changeType: string; dn: string; oldDn?: string; attributes: string[] };
    metadata: Record<string, unknown>;
    idempotency_key: string;
    occurred_at: Date;
  }>(
    `SELECT type, data, metadata, idempotency_key, occurred_at FROM events
      WHERE stream_id = $1 AND type <> 'EntrySnapshot' ORDER BY stream_version`,
    [`entry-${uuid}`],
  );
  return result.rows;
}

t.test("add, modify, rename, move and delete, each as such, with no author", async (t) => {
  const f = await fixture(t);
  const carl = `CN=carl,${PEOPLE}`;
  const carlGuid = await guidOf(f, carl);
  const ivy = `CN=ivy,${PEOPLE}`;

  await f.directory.add(ivy, { objectClass: "user", sAMAccountName: "ivy", sn: "Ivy" });
  await f.directory.modify(carl, [{ operation: "replace", attribute: "title", values: "Chief" }]);
  t.equal(await f.sync(), 2, "the add and the modify");
  const ivyGuid = await guidOf(f, ivy);

  await f.directory.modifyDN(carl, "CN=carla");
  t.equal(await f.sync(), 1, "the rename");
  await f.directory.modifyDN(`CN=carla,${PEOPLE}`, "CN=carla", { newSuperior: ELSEWHERE });
  t.equal(await f.sync(), 1, "the move");
  await f.directory.delete(ivy);
  t.equal(await f.sync(), 1, "the delete, from its tombstone");
  t.equal(await f.sync(), 0, "a pass with nothing new records nothing");

  const changes = (await feed(f.db.pool)).map((c) => [c.change_type, c.dn, c.old_dn, c.actor]);
  t.same(changes, [
    ["add", ivy, null, null],
    ["modify", carl, null, null],
    ["modrdn", `CN=carla,${PEOPLE}`, carl, null],
    ["modrdn", `CN=carla,${ELSEWHERE}`, `CN=carla,${PEOPLE}`, null],
    ["delete", ivy, null, null],
  ]);
  const carlEvents = await eventsOf(f.db.pool, carlGuid);
  t.same(
    carlEvents.map((e) => e.metadata.actor),
    [null, null, null],
    "AD records no author: by is unknown, never made up",
  );
  t.ok(
    carlEvents.every((e) => /^ad:[0-9a-f-]{36}:\d+:[0-9a-f-]{36}$/.test(e.idempotency_key)),
    "keyed by the DC's invocationId, the write's USN and the object",
  );
  const deleted = (await eventsOf(f.db.pool, ivyGuid)).at(-1)!;
  t.equal(deleted.data.dn, ivy, "the delete names the DN the entry had, not its tombstone's");
  const tombstone = await tombstoneWhenChanged(f, ivyGuid);
  t.equal(deleted.occurred_at.toISOString(), tombstone.toISOString(), "at its whenChanged");
});

t.test("a renamed OU moves what is below it, which AD does not write", async (t) => {
  const f = await fixture(t);
  const jon = await guidOf(f, `CN=jon,OU=Inner,OU=Moving,${BASE}`);
  await f.directory.modifyDN(`OU=Moving,${BASE}`, "OU=Moved");
  const moved = await f.directory.get(`CN=jon,OU=Inner,OU=Moved,${BASE}`, {
    attributes: ["uSNChanged"],
  });
  t.ok(moved, "jon is below the new name");
  t.equal(await f.sync(), 4, "the OU, and each of the three below it");
  const changes = (await feed(f.db.pool)).map((c) => [c.change_type, c.dn, c.old_dn]);
  t.same(changes[0], ["modrdn", `OU=Moved,${BASE}`, `OU=Moving,${BASE}`], "the rename first");
  t.same(
    changes.slice(1).sort(),
    [
      ["modrdn", `CN=ivo,OU=Moved,${BASE}`, `CN=ivo,OU=Moving,${BASE}`],
      ["modrdn", `OU=Inner,OU=Moved,${BASE}`, `OU=Inner,OU=Moving,${BASE}`],
      ["modrdn", `CN=jon,OU=Inner,OU=Moved,${BASE}`, `CN=jon,OU=Inner,OU=Moving,${BASE}`],
    ].sort(),
  );
  const [ou] = await eventsOf(f.db.pool, await guidOf(f, `OU=Moved,${BASE}`));
  const [below] = await eventsOf(f.db.pool, jon);
  t.equal(below?.metadata.usn, ou?.metadata.usn, "at the OU's write");
  t.equal(await f.sync(), 0, "and once");
});

t.test("two modifies of one entry between passes are two changes, in order", async (t) => {
  const f = await fixture(t);
  const dora = `CN=dora,${PEOPLE}`;
  const uuid = await guidOf(f, dora);
  await f.directory.modify(dora, [
    { operation: "replace", attribute: "title", values: "First" },
    { operation: "replace", attribute: "description", values: "Described" },
  ]);
  await f.directory.modify(dora, [{ operation: "replace", attribute: "title", values: "Second" }]);
  t.equal(await f.sync(), 2, "AD's metadata shows two writes");
  const events = await eventsOf(f.db.pool, uuid);
  t.same(
    events.map((e) => e.data.attributes),
    [["description"], ["title"]],
    "each holds what its write left (the first title is gone: AD keeps the latest)",
  );
  t.same(
    events.map((e) => e.metadata.writes),
    [2, 2],
    "both say the entry was written twice since the last pass",
  );
  const usns = events.map((e) => BigInt(e.metadata.usn as string));
  t.ok(usns[0]! < usns[1]!, "in the DC's order");
  const state = await f.db.pool.query<{ title: string[] }>(
    "SELECT data->'after'->'attributes'->'title' AS title FROM events WHERE stream_id = $1 ORDER BY stream_version DESC LIMIT 1",
    [`entry-${uuid}`],
  );
  t.same(state.rows[0]?.title, ["Second"]);
});

t.test(
  "an object moved out of the base is recorded deleted by the reconciliation, which the passes cannot see",
  async (t) => {
    // Capture of OU=People alone: a move to OU=Elsewhere takes the object out of what the
    // pass searches, and leaves no tombstone, so only a comparison of every entry sees it.
    const f = await directoryCaptureFixture(t, {
      server: { ...server, base: PEOPLE },
      source: "ad",
      types: TYPES,
    });
    await f.sync();
    const kim = `CN=kim,${PEOPLE}`;
    await f.directory.add(kim, { objectClass: "user", sAMAccountName: "kim", sn: "Kim" });
    t.equal(await f.sync(), 1, "the add");
    await f.directory.modifyDN(kim, "CN=kim", { newSuperior: ELSEWHERE });
    t.equal(await f.sync(), 0, "the pass does not see the move out of its base");
    await fullPassesIfDue(f.context, { source: "ad", reconcileInterval: 0, snapshotInterval: 0 });
    // A pass with nothing new, then the projections at the log's head: the feed is theirs.
    t.equal(await f.sync(), 0, "nothing more for the passes");
    const changes = (await feed(f.db.pool)).map((c) => [c.change_type, c.dn]);
    t.same(changes, [
      ["add", kim],
      ["delete", kim],
    ]);
    t.ok(
      await readCaptureCheckpoint(f.db.pool, "reconcile"),
      "the reconciliation notes when it ran, for the next one's interval",
    );
  },
);

t.test("a group's members added and removed", async (t) => {
  const f = await fixture(t);
  const team = `CN=team,${PEOPLE}`;
  const bob = `CN=bob,${PEOPLE}`;
  const uuid = await guidOf(f, team);
  await f.directory.modify(team, [{ operation: "add", attribute: "member", values: bob }]);
  t.equal(await f.sync(), 1);
  await f.directory.modify(team, [
    { operation: "delete", attribute: "member", values: `CN=ada,${PEOPLE}` },
  ]);
  t.equal(await f.sync(), 1);
  const changes = await feed(f.db.pool, uuid);
  t.same(
    changes.map((c) => [c.change_type, c.attributes, c.actor]),
    [
      ["modify", ["member"], null],
      ["modify", ["member"], null],
    ],
  );
  // Samba keeps linked values ordered by their targets' GUIDs: where a value lands varies.
  t.match(
    changes.map((c) => c.patch),
    [[{ op: "add", value: bob }], [{ op: "remove" }]],
  );
  const members = await f.directory.get(team, { attributes: ["member"] });
  t.same(members?.attributes.member, [bob], "as the DC has it");
});

t.test(
  "a member added and one removed between passes: one change on Samba, which answers no value metadata, said once",
  async (t) => {
    const said: string[] = [];
    const log = {
      info() {},
      warn() {},
      error() {},
      debug(_fields: unknown, message?: string) {
        if (message) said.push(message);
      },
    };
    const f = await fixture(t, log);
    const crew = `CN=crew,${PEOPLE}`;
    const eve = `CN=eve,${PEOPLE}`;
    const fay = `CN=fay,${PEOPLE}`;
    const gus = `CN=gus,${PEOPLE}`;
    await f.directory.add(crew, { objectClass: "group", sAMAccountName: "crew", member: [eve] });
    t.equal(await f.sync(), 1, "the group's add");
    const uuid = await guidOf(f, crew);
    const asked = await f.directory.get(crew, {
      attributes: ["member", "msDS-ReplValueMetaData", "msDS-ReplValueMetaDataExt"],
    });
    t.same(
      Object.keys(asked?.attributes ?? {}).filter(
        (name) => /ReplValueMetaData/i.test(name) && asked!.attributes[name]!.length > 0,
      ),
      [],
      "Samba 4.17 answers no msDS-ReplValueMetaData (a Windows DC would: one XML stamp a member)",
    );

    await f.directory.modify(crew, [{ operation: "add", attribute: "member", values: fay }]);
    await f.directory.modify(crew, [{ operation: "delete", attribute: "member", values: eve }]);
    // Passes with the test's log (f.sync's context logs nowhere).
    const pass = async () => (await captureOnce(f.context, "ad")).recorded;
    t.equal(await pass(), 1, "two writes, one change: nothing tells them apart");
    await f.directory.modify(crew, [{ operation: "add", attribute: "member", values: gus }]);
    await f.directory.modify(crew, [{ operation: "delete", attribute: "member", values: fay }]);
    t.equal(await pass(), 1);
    t.equal(await f.sync(), 0, "the projections, for the feed");

    const changes = await feed(f.db.pool, uuid);
    t.same(
      changes.map((c) => [c.change_type, c.change_type === "add" ? [] : c.attributes]),
      [
        ["add", []],
        ["modify", ["member"]],
        ["modify", ["member"]],
      ],
    );
    const events = await eventsOf(f.db.pool, uuid);
    const group = await f.directory.get(crew, { attributes: ["whenChanged", "uSNChanged"] });
    t.equal(
      events.at(-1)!.metadata.usn,
      String(group!.attributes.uSNChanged![0]),
      "at the group's uSNChanged",
    );
    const about = said.filter((message) => /msDS-ReplValueMetaData/.test(message));
    t.equal(about.length, 1, "said once, at debug, not at each pass");
    t.match(about[0], /answers no msDS-ReplValueMetaData.*one change/);
    t.same((await f.directory.get(crew, { attributes: ["member"] }))?.attributes.member, [gus]);
  },
);

t.test("a write annal made keeps its cause; one made beside annal has none", async (t) => {
  const f = await fixture(t);
  const eve = `CN=eve,${PEOPLE}`;
  const fay = `CN=fay,${PEOPLE}`;
  const causationId = randomUUID();
  const writes = causedWrites(f.directory, {
    pool: f.db.pool,
    boundAs: dc.bindDN,
    cause: { causationId, correlationId: "workflow-1" },
  });
  await writes.modify(eve, [{ operation: "replace", attribute: "title", values: "Approved" }]);
  await f.directory.modify(fay, [{ operation: "replace", attribute: "title", values: "Approved" }]);
  t.equal(await f.sync(), 2);
  const [byAnnal] = await eventsOf(f.db.pool, await guidOf(f, eve));
  t.match(byAnnal?.metadata, { actor: null, causationId, correlationId: "workflow-1" });
  const [beside] = await eventsOf(f.db.pool, await guidOf(f, fay));
  t.equal(beside?.metadata.causationId, undefined, "no note, no cause");
  const left = await f.db.pool.query("SELECT 1 FROM directory_write_intents");
  t.equal(left.rowCount, 0, "the note was taken");
});

t.test(
  "a checkpoint of another DC's USNs: every entry is compared, and the log says why",
  async (t) => {
    const warnings: string[] = [];
    const log = {
      info() {},
      debug() {},
      error() {},
      warn(_fields: unknown, message?: string) {
        warnings.push(message ?? "");
      },
    };
    const f = await fixture(t, log);
    const gus = `CN=gus,${PEOPLE}`;
    const stored = parseADPlace((await readCaptureCheckpoint(f.db.pool, "ad"))!)!;
    // Another DC's place, with a USN past this DC's: its own search would find nothing.
    await writeCaptureCheckpoint(
      f.db.pool,
      "ad",
      `00000000-0000-4000-8000-000000000000@${stored.usn + 1_000_000n}`,
    );
    await f.directory.modify(gus, [{ operation: "replace", attribute: "title", values: "Found" }]);
    const result = await captureOnce(f.context, "ad");
    t.equal(result.recorded, 1, "the reconciliation finds the change");
    t.match(warnings, [/not this domain controller's/]);
    const after = parseADPlace((await readCaptureCheckpoint(f.db.pool, "ad"))!)!;
    t.equal(after.invocationId, stored.invocationId, "the checkpoint is this DC's again");
    t.ok(after.usn > stored.usn);
    await f.directory.modify(gus, [{ operation: "replace", attribute: "title", values: "Again" }]);
    t.equal((await captureOnce(f.context, "ad")).recorded, 1, "and USN passes go on");
    t.equal(warnings.length, 1);
  },
);

t.test("a server that is no AD domain controller is refused", async (t) => {
  const slapd = await startSlapd();
  t.teardown(() => slapd.stop());
  const f = await directoryCaptureFixture(t, { server: slapd, source: "ad" });
  await t.rejects(captureOnce(f.context, "ad"), {
    code: "ANNAL_CAPTURE_SOURCE_MISSING",
    message: /root DSE names no highestCommittedUSN/,
    hint: /for OpenLDAP set "accesslog"/,
  });
});

async function tombstoneWhenChanged(f: DirectoryCaptureFixture, uuid: string): Promise<Date> {
  for await (const page of f.directory.search(`CN=Deleted Objects,${BASE}`, {
    scope: "one",
    attributes: ["objectGUID", "whenChanged"],
    binaryAttributes: ["objectGUID"],
    showDeleted: true,
  })) {
    for (const entry of page) {
      if (guidText(entry.attributes.objectGUID![0] as Buffer) !== uuid) continue;
      const text = String(entry.attributes.whenChanged![0]);
      const [, y, mo, d, h, mi, s] = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)/.exec(text)!;
      return new Date(Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!));
    }
  }
  throw new Error(`no tombstone of ${uuid}`);
}
