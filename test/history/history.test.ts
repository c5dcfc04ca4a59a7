import t, { type Test } from "tap";
import {
  changeFeed,
  changesOf,
  countChanges,
  currentEntry,
  entryAt,
  entryUUIDForDn,
  lastVersion,
} from "../../src/history/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { EntryHistory } from "../support/entries.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(300_000);

const PEOPLE = "ou=people,dc=example,dc=org";
const at = (day: number) => new Date(Date.UTC(2026, 0, day, 12));

/** Alice: added day 1, mail day 5, renamed day 10. Bob: added day 2, deleted day 8. Carol later takes uid=alice. */
async function setUp(t: Test) {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const history = await EntryHistory.start(t, pool, store);
  const person = (uid: string) => ({
    dn: `uid=${uid},${PEOPLE}`,
    type: "user",
    attributes: { objectClass: ["inetOrgPerson"], uid: [uid], cn: [uid], sn: ["X"] },
  });
  const alice = await history.add(person("alice"), { at: at(1) });
  const bob = await history.add(person("bob"), { at: at(2) });
  await history.modify(alice, { mail: ["a@example.org"] }, { at: at(5), actor: "uid=admin" });
  await history.delete(bob, { at: at(8) });
  await history.rename(alice, `uid=alice2,${PEOPLE}`, { at: at(10) });
  const carol = await history.add(
    { ...person("carol"), dn: `uid=alice,${PEOPLE}` },
    { at: at(12) },
  );
  await history.settled();
  return { pool, alice, bob, carol };
}

t.test("entryAt: the version valid at a moment, or why there is none", async (t) => {
  const { pool, alice, bob } = await setUp(t);
  const early = await entryAt(pool, alice, at(3));
  t.ok(early.found);
  if (early.found) {
    t.equal(early.entry.dn, `uid=alice,${PEOPLE}`);
    t.notOk("mail" in early.entry.attributes);
    t.same(early.entry.modifiedAt, at(1));
    t.same(early.validTo, at(5), "valid until the next change");
  }
  const later = await entryAt(pool, alice, at(6));
  t.same(later.found && later.entry.attributes.mail, ["a@example.org"]);
  t.same(await entryAt(pool, alice, new Date(Date.UTC(2025, 11, 1))), {
    found: false,
    reason: "not-yet",
    since: at(1),
  });
  t.same(await entryAt(pool, bob, at(9)), { found: false, reason: "deleted", since: at(8) });
  t.same(await entryAt(pool, "00000000-0000-4000-8000-000000000000", at(9)), {
    found: false,
    reason: "unknown",
  });
  t.equal((await currentEntry(pool, alice))?.dn, `uid=alice2,${PEOPLE}`);
  t.equal(await currentEntry(pool, bob), undefined);
  t.match(await lastVersion(pool, bob), { deleted: true, validFrom: at(8), type: "user" });
});

t.test("entryUUIDForDn: who has a DN now, had it at a moment, or last had it", async (t) => {
  const { pool, alice, bob, carol } = await setUp(t);
  t.equal(await entryUUIDForDn(pool, `uid=alice,${PEOPLE}`), carol, "now: Carol");
  t.equal(
    await entryUUIDForDn(pool, `UID=Alice, ou=People,dc=EXAMPLE,dc=org`, at(6)),
    alice,
    "then: Alice, any spelling",
  );
  t.equal(
    await entryUUIDForDn(pool, `uid=alice2,${PEOPLE}`, at(6)),
    undefined,
    "nobody had alice2 yet",
  );
  t.equal(await entryUUIDForDn(pool, `uid=bob,${PEOPLE}`), undefined);
  t.equal(await entryUUIDForDn(pool, `uid=bob,${PEOPLE}`, "ever"), bob, "ever: the deleted Bob");
  t.equal(
    await entryUUIDForDn(pool, `uid=alice,${PEOPLE}`, "ever"),
    carol,
    "ever prefers who has it now",
  );
  await t.rejects(entryUUIDForDn(pool, "not a dn"), { code: "ANNAL_DN_INVALID" });
});

t.test("changeFeed and changesOf: pages in log order with filters", async (t) => {
  const { pool, alice } = await setUp(t);
  const all = await changeFeed(pool, {}, { direction: "forward", limit: 100 });
  t.same(
    all.changes.map((c) => c.changeType),
    ["add", "add", "modify", "delete", "modrdn", "add"],
  );
  t.same([all.more, all.behind], [false, false]);
  const mail = all.changes[2]!;
  t.match(mail, {
    entryUUID: alice,
    actor: "uid=admin",
    attributes: ["mail"],
    occurredAt: at(5),
    entryType: "user",
  });
  t.notOk("patch" in mail, "the patch only when asked");
  const first = await changeFeed(pool, {}, { direction: "forward", limit: 2, withPatch: true });
  t.same([first.more, first.behind], [true, false]);
  t.same(first.changes[0]!.patch?.[0]?.op, "add");
  const second = await changeFeed(
    pool,
    {},
    { direction: "forward", limit: 2, after: first.changes[1] },
  );
  t.same(
    second.changes.map((c) => c.changeType),
    ["modify", "delete"],
  );
  t.same([second.more, second.behind], [true, true]);
  const back = await changeFeed(
    pool,
    {},
    { direction: "backward", limit: 2, before: second.changes[0] },
  );
  t.same(
    back.changes.map((c) => c.position),
    first.changes.map((c) => c.position),
    "backward, oldest first",
  );
  t.same([back.more, back.behind], [false, true]);
  const ofAlice = await changesOf(
    pool,
    alice,
    { types: ["modify", "modrdn"] },
    { direction: "forward", limit: 10 },
  );
  t.same(
    ofAlice.changes.map((c) => c.changeType),
    ["modify", "modrdn"],
  );
  t.equal(ofAlice.changes[1]!.oldDn, `uid=alice,${PEOPLE}`);
  t.equal(await countChanges(pool, { from: at(4), to: at(10) }), 2, "from inclusive, to exclusive");
  t.equal(
    await countChanges(pool, { affects: ["mail", "sn"] }),
    5,
    "adds and deletes touch every attribute",
  );
  t.equal(await countChanges(pool, { entryUUID: alice, affects: ["mail"] }), 1);
});
