import t, { type Test } from "tap";
import { GROUPS, PEOPLE, restHarness } from "./fixtures/harness.ts";

t.setTimeout(300_000);

const q = encodeURIComponent;
/** Noon of a day of March 2026. */
const march = (day: number) => new Date(Date.UTC(2026, 2, day, 12));
const iso = (day: number) => march(day).toISOString();

const person = (uid: string, title: string) => ({
  dn: `uid=${uid},${PEOPLE}`,
  type: "user",
  attributes: {
    objectClass: ["inetOrgPerson"],
    uid: [uid],
    cn: [uid],
    sn: [uid],
    title: [title],
  },
});

const group = (cn: string, member: string[]) => ({
  dn: `cn=${cn},${GROUPS}`,
  type: "group",
  attributes: { objectClass: ["groupOfNames"], cn: [cn], member },
});

/**
 * March: Alice is on call from the 1st, off on the 5th, on again from the 10th (her phone
 * edited on the 12th, which keeps her on call). Bob is on call from the 3rd until he is
 * deleted on the 8th. Carol never is. The on-call group lists Alice from the 2nd to the 6th
 * and again from the 20th (renamed to oncall-2 on the 22nd); staff lists the on-call group
 * from the 4th; ops lists Alice directly from the 1st; a cycle (staff lists ring, ring lists
 * staff) must not loop.
 */
async function setUp(t: Test) {
  const h = await restHarness(t);
  const { history } = h;
  const alice = await history.add(person("alice", "on-call"), { at: march(1) });
  const bob = await history.add(person("bob", "engineer"), { at: march(1) });
  const carol = await history.add(person("carol", "engineer"), { at: march(1) });
  await history.modify(bob, { title: ["on-call"] }, { at: march(3) });
  await history.modify(alice, { title: ["engineer"] }, { at: march(5) });
  await history.delete(bob, { at: march(8) });
  await history.modify(alice, { title: ["On-Call"] }, { at: march(10) });
  await history.modify(alice, { telephoneNumber: ["+49 30 1"] }, { at: march(12) });
  const aliceDn = `uid=alice,${PEOPLE}`;
  const ops = await history.add(group("ops", [`UID=Alice, ou=People,dc=example,dc=org`]), {
    at: march(1),
  });
  const oncall = await history.add(group("oncall", [`uid=carol,${PEOPLE}`]), { at: march(1) });
  await history.modify(oncall, { member: [`uid=carol,${PEOPLE}`, aliceDn] }, { at: march(2) });
  await history.modify(oncall, { member: [`uid=carol,${PEOPLE}`] }, { at: march(6) });
  await history.modify(oncall, { member: [`uid=carol,${PEOPLE}`, aliceDn] }, { at: march(20) });
  await history.rename(oncall, `cn=oncall-2,${GROUPS}`, { at: march(22) });
  const staff = await history.add(group("staff", [`cn=nobody,${GROUPS}`]), { at: march(1) });
  await history.modify(staff, { member: [`cn=oncall,${GROUPS}`] }, { at: march(4) });
  // Staff names the on-call group by its old DN: after the rename it no longer lists it.
  const ring = await history.add(group("ring", [`cn=staff,${GROUPS}`]), { at: march(1) });
  await history.modify(
    staff,
    { member: [`cn=oncall,${GROUPS}`, `cn=ring,${GROUPS}`] },
    {
      at: march(4),
    },
  );
  await history.settled();
  return { ...h, alice, bob, carol, ops, oncall, staff, ring };
}

t.test("during: everyone who matched at some moment of the interval, and when", async (t) => {
  const { get, alice, bob } = await setUp(t);
  const during = `during=${q(`${iso(2)}/${iso(15)}`)}`;
  const response = await get(
    `/api/entries/users?filter=${q("title = on-call")}&${during}&fields=uid,title&include=nodes,pageInfo,count`,
  );
  t.equal(response.statusCode, 200, response.body);
  const body = response.json();
  t.equal(body.count, 2, "Alice and Bob; Carol never");
  const byUid = Object.fromEntries(
    body.nodes.map((node: { uid: string; during: unknown }) => [node.uid, node]),
  );
  t.same(
    byUid.alice.during,
    [
      { from: iso(2), to: iso(5) },
      { from: iso(10), to: iso(15) },
    ],
    "Alice: two stretches, clipped to the interval; the phone edit does not break the second",
  );
  t.same(byUid.alice.title, ["On-Call"], "her last matching state");
  t.same(byUid.bob.during, [{ from: iso(3), to: iso(8) }], "Bob: until he was deleted");
  t.same(
    body.nodes.map((node: { entryUUID: string }) => node.entryUUID),
    [alice, bob].sort(),
    "in entryUUID order",
  );
  const open = (
    await get(`/api/entries/users?filter=${q("(title=on-call)")}&during=${q(`${iso(11)}/..`)}`)
  ).json();
  t.same(
    open.nodes.map((node: { during: unknown }) => node.during),
    [[{ from: iso(11), to: null }]],
    "open end: still matches",
  );
  const none = (
    await get(
      `/api/entries/users?filter=${q("(title=on-call)")}&during=${q(`${iso(8)}/${iso(10)}`)}&include=count`,
    )
  ).json();
  t.same(none, { count: 0 }, "nobody from Bob's deletion until Alice's return (the end excluded)");
});

t.test("during: keyset pages over the matching entries, both ways", async (t) => {
  const { get } = await setUp(t);
  const base = `/api/entries/users?during=${q("2026-03-01/P1M")}`;
  const all = (await get(base)).json().nodes.map((node: { uid: string[] }) => node.uid[0]);
  t.equal(all.length, 3);
  const first = (await get(`${base}&first=2`)).json();
  t.equal(first.nodes.length, 2);
  t.ok(first.pageInfo.hasNextPage);
  const second = (await get(`${base}&first=2&after=${q(first.pageInfo.endCursor)}`)).json();
  t.same(
    [...first.nodes, ...second.nodes].map((node: { uid: string[] }) => node.uid[0]),
    all,
  );
  t.notOk(second.pageInfo.hasNextPage);
  t.ok(second.pageInfo.hasPreviousPage);
  const back = (await get(`${base}&last=2&before=${q(second.pageInfo.startCursor)}`)).json();
  t.same(
    back.nodes.map((node: { uid: string[] }) => node.uid[0]),
    all.slice(0, 2),
  );
  const wrong = await get(
    `/api/entries/users?during=${q("2026-03-02/P1M")}&after=${q(first.pageInfo.endCursor)}`,
  );
  t.match(wrong.json(), { code: "ANNAL_CURSOR_MISMATCH" });
});

t.test("memberships: each group with from/to, nested groups included", async (t) => {
  const { get, alice, ops, oncall, staff, ring } = await setUp(t);
  const response = await get(
    `/api/entries/users/${q(`uid=alice,${PEOPLE}`)}/memberships?during=${q("2026-03-01/2026-04-01")}`,
  );
  t.equal(response.statusCode, 200, response.body);
  const byCn = Object.fromEntries(
    response
      .json()
      .nodes.map((node: { group: { dn: string } }) => [
        /^cn=([^,]+)/.exec(node.group.dn)?.[1],
        node,
      ]),
  );
  t.same(Object.keys(byCn).sort(), ["oncall-2", "ops", "ring", "staff"]);
  t.match(byCn.ops, {
    group: { entryUUID: ops, type: "group" },
    during: [{ from: iso(1), to: "2026-04-01T00:00:00.000Z" }],
    direct: true,
    via: [],
  });
  t.match(byCn["oncall-2"], {
    group: { entryUUID: oncall, dn: `cn=oncall-2,${GROUPS}` },
    during: [
      { from: iso(2), to: iso(6) },
      { from: iso(20), to: "2026-04-01T00:00:00.000Z" },
    ],
    direct: true,
  });
  t.match(byCn.staff, {
    group: { entryUUID: staff },
    during: [
      { from: iso(4), to: iso(6) },
      { from: iso(20), to: iso(22) },
    ],
    direct: false,
    via: [`cn=oncall-2,${GROUPS}`],
  });
  t.match(byCn.ring, {
    group: { entryUUID: ring },
    during: [
      { from: iso(4), to: iso(6) },
      { from: iso(20), to: iso(22) },
    ],
    via: [`cn=staff,${GROUPS}`],
  });
  const ongoing = (
    await get(`/api/entries/users/${alice}/memberships?during=${q(`${iso(21)}/..`)}`)
  ).json();
  t.same(
    ongoing.nodes.map((node: { group: { dn: string }; during: unknown }) => [
      node.group.dn,
      node.during,
    ]),
    [
      [`cn=oncall-2,${GROUPS}`, [{ from: iso(21), to: null, ongoing: true }]],
      [`cn=ops,${GROUPS}`, [{ from: iso(21), to: null, ongoing: true }]],
      [`cn=ring,${GROUPS}`, [{ from: iso(21), to: iso(22), ongoing: false }]],
      [`cn=staff,${GROUPS}`, [{ from: iso(21), to: iso(22), ongoing: false }]],
    ],
    "an open end: to null while it still holds",
  );
  const early = (
    await get(
      `/api/entries/users/${q(`uid=alice,${PEOPLE}`)}/memberships?during=${q("2026-03-01T00:00:00Z/PT36H")}`,
    )
  ).json();
  t.same(
    early.nodes.map((node: { group: { dn: string }; during: unknown }) => [
      node.group.dn,
      node.during,
    ]),
    [[`cn=ops,${GROUPS}`, [{ from: iso(1), to: "2026-03-02T12:00:00.000Z", ongoing: true }]]],
    "before the on-call group listed her: ops only",
  );
});

t.test(
  "memberships over a closed interval tell a membership that goes on from one that ended at its end",
  async (t) => {
    const { get } = await setUp(t);
    // The on-call group (and staff through it) stops listing Alice at noon on the 6th, the
    // interval's end; ops still lists her then.
    const response = await get(
      `/api/entries/users/${q(`uid=alice,${PEOPLE}`)}/memberships?during=${q(`${iso(3)}/${iso(6)}`)}`,
    );
    t.equal(response.statusCode, 200, response.body);
    t.same(
      response
        .json()
        .nodes.map((node: { group: { dn: string }; during: unknown }) => [
          node.group.dn,
          node.during,
        ]),
      [
        [`cn=oncall,${GROUPS}`, [{ from: iso(3), to: iso(6), ongoing: false }]],
        [`cn=ops,${GROUPS}`, [{ from: iso(3), to: iso(6), ongoing: true }]],
        [`cn=ring,${GROUPS}`, [{ from: iso(4), to: iso(6), ongoing: false }]],
        [`cn=staff,${GROUPS}`, [{ from: iso(4), to: iso(6), ongoing: false }]],
      ],
    );
  },
);

t.test(
  "memberships and an entry's changes refuse bad intervals; changes take during",
  async (t) => {
    const { get, alice } = await setUp(t);
    const bad = await get(
      `/api/entries/users/${alice}/memberships?during=${q("2026-04-01/2026-03-01")}`,
    );
    t.equal(bad.statusCode, 400);
    t.match(bad.json(), { code: "ANNAL_INTERVAL_REVERSED", parameter: "during" });
    const unknown = await get(
      `/api/entries/users/00000000-0000-4000-8000-000000000000/memberships`,
    );
    t.match(unknown.json(), { code: "ANNAL_ENTRY_NOT_FOUND" });
    const changes = (
      await get(`/api/entries/users/${alice}/changes?during=${q(`${iso(4)}/${iso(11)}`)}`)
    ).json();
    t.same(
      changes.nodes.map((node: { occurredAt: string }) => node.occurredAt),
      [iso(5), iso(10)],
      "the changes inside the interval, none on its end",
    );
  },
);
