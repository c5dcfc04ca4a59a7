import t, { type Test } from "tap";
import { GROUPS, PEOPLE, restHarness, testConfig } from "./fixtures/harness.ts";

t.setTimeout(300_000);

const q = encodeURIComponent;
// A Sunday afternoon in Berlin: the channel's clock in these tests.
const NOW = new Date("2026-11-22T15:30:00Z");
const hoursAgo = (h: number) => new Date(NOW.getTime() - h * 3_600_000);

/**
 * Alice added 10 days ago, mail changed 3 days ago by herself, password changed yesterday
 * (redacted), renamed 2 hours ago; Bob added 30 hours ago and deleted 1 hour ago.
 */
async function setUp(t: Test, timeZone = "Europe/Berlin") {
  const harness = await restHarness(t, {
    now: () => NOW,
    config: testConfig(`[rest]\ntimeZone = "${timeZone}"`),
  });
  const { history } = harness;
  const alice = await history.add(
    {
      dn: `uid=alice,${PEOPLE}`,
      type: "user",
      attributes: { objectClass: ["inetOrgPerson"], uid: ["alice"], cn: ["Alice"], sn: ["L"] },
    },
    { at: hoursAgo(240) },
  );
  await history.modify(
    alice,
    { mail: ["alice@example.org"] },
    {
      at: hoursAgo(72),
      actor: `uid=alice,${PEOPLE}`,
    },
  );
  await history.modify(alice, {}, { at: hoursAgo(24), redacted: ["userPassword"] });
  await history.rename(alice, `uid=alice2,${PEOPLE}`, { at: hoursAgo(2) });
  const bob = await history.add(
    {
      dn: `uid=bob,${PEOPLE}`,
      type: "user",
      attributes: { objectClass: ["inetOrgPerson"], uid: ["bob"], cn: ["Bob"], sn: ["B"] },
    },
    { at: hoursAgo(30) },
  );
  await history.delete(bob, { at: hoursAgo(1), actor: null });
  await history.settled();
  return { ...harness, alice, bob };
}

type Change = { type: string; dn: string; cursor: string; occurredAt: string };
const kinds = (body: { nodes: Change[] }) =>
  body.nodes.map((c) => `${c.type} ${/^uid=([^,]+)/.exec(c.dn)?.[1]}`);

t.test("the change feed lists every change in recorded order, with who and when", async (t) => {
  const { get, alice } = await setUp(t);
  const response = await get("/api/changes");
  t.equal(response.statusCode, 200, response.body);
  t.equal(response.headers["cache-control"], "no-store");
  const body = response.json();
  t.same(kinds(body), [
    "add alice",
    "modify alice",
    "modify alice",
    "modrdn alice2",
    "add bob",
    "delete bob",
  ]);
  const mail = body.nodes[1];
  t.same(Object.keys(mail), [
    "cursor",
    "changeId",
    "entryUUID",
    "id",
    "dn",
    "oldDn",
    "type",
    "entryType",
    "occurredAt",
    "recordedAt",
    "actor",
    "attributes",
    "cause",
  ]);
  t.match(mail, {
    entryUUID: alice,
    id: Buffer.from(`user:${alice}`).toString("base64"),
    dn: `uid=alice,${PEOPLE}`,
    oldDn: null,
    type: "modify",
    entryType: "user",
    occurredAt: hoursAgo(72).toISOString(),
    actor: `uid=alice,${PEOPLE}`,
    attributes: ["mail"],
  });
  t.not(mail.recordedAt, mail.occurredAt, "recordedAt is annal's own clock");
  t.match(body.nodes[3], {
    type: "modrdn",
    dn: `uid=alice2,${PEOPLE}`,
    oldDn: `uid=alice,${PEOPLE}`,
  });
  t.equal(body.nodes[5].actor, null);
  t.same(body.nodes[2].attributes, ["userPassword"], "a redacted attribute's change, by name");
});

t.test("include: patch, count, and count alone", async (t) => {
  const { get } = await setUp(t);
  const withPatch = (await get("/api/changes?include=nodes,patch&first=2")).json();
  t.same(Object.keys(withPatch), ["nodes"]);
  t.same(withPatch.nodes[1].patch, [{ op: "add", path: "/mail", value: ["alice@example.org"] }]);
  t.same(withPatch.nodes[0].patch[0].op, "add");
  const patchOnly = (await get("/api/changes?include=patch&first=1")).json();
  t.ok(patchOnly.nodes[0].patch, "patch implies nodes");
  const counted = (await get("/api/changes?include=nodes,pageInfo,count&first=1")).json();
  t.equal(counted.count, 6);
  t.equal(counted.nodes.length, 1);
  t.same((await get("/api/changes?include=count")).json(), { count: 6 });
  t.same((await get("/api/changes?include=count&type=add")).json(), { count: 2 });
  const wrong = await get("/api/changes?include=count,edges");
  t.match(wrong.json(), { status: 400, code: "ANNAL_PARAMETER_INVALID", parameter: "include" });
});

t.test("a patch never serves a redacted attribute's values, should one hold them", async (t) => {
  const { get, history, alice } = await setUp(t);
  // Capture leaves them out; these two changes are written around it.
  await history.modify(alice, { userPassword: ["{SSHA}one"], title: ["Engineer"] });
  await history.modify(alice, { userPassword: ["{SSHA}two"], title: ["Lead"] });
  await history.settled();
  for (const path of [
    "/api/changes?include=patch&last=2",
    `/api/entries/users/${alice}/changes?include=patch&last=2`,
  ]) {
    const { nodes } = (await get(path)).json() as { nodes: { patch: { path: string }[] }[] };
    t.same(
      nodes.map((node) => node.patch.map((operation) => operation.path.split("/")[1])),
      [["title"], ["title"]],
      "the title's operations, the password's dropped",
    );
    t.notMatch(JSON.stringify(nodes), /SSHA/);
  }
});

t.test("type filters by kind of change, affects by touched attribute", async (t) => {
  const { get } = await setUp(t);
  t.same(kinds((await get("/api/changes?type=modify")).json()), ["modify alice", "modify alice"]);
  t.same(kinds((await get("/api/changes?type=add,delete")).json()), [
    "add alice",
    "add bob",
    "delete bob",
  ]);
  t.same(kinds((await get("/api/changes?type=rename")).json()), ["modrdn alice2"]);
  const wrong = await get("/api/changes?type=update");
  t.match(wrong.json(), { status: 400, code: "ANNAL_PARAMETER_INVALID", parameter: "type" });
  t.same(kinds((await get("/api/changes?affects=MAIL")).json()), ["modify alice"]);
  t.same(
    kinds((await get("/api/changes?affects=userpassword")).json()),
    ["modify alice"],
    "redacted too",
  );
  t.same(kinds((await get("/api/changes?affects=uid&type=add")).json()), ["add alice", "add bob"]);
  const lenient = await get("/api/changes?affects=shoeSize");
  t.same(lenient.json().nodes, [], "lenient: matches nothing");
  t.equal(lenient.headers["annal-unknown-attributes"], "shoeSize", "and says so");
  const filtered = await get(`/api/changes?filter=${encodeURIComponent("(uid=alice)")}`);
  t.equal(filtered.statusCode, 200, "the feed takes no filter: lenient ignores it");
  t.equal(filtered.headers["annal-ignored-parameters"], "filter", "and names it");
  const strict = await get("/api/changes?affects=shoeSize", { prefer: "handling=strict" });
  t.match(strict.json(), { status: 400, code: "ANNAL_ATTRIBUTES_UNKNOWN", unknown: ["shoeSize"] });
});

t.test("entryType and actor: the entry's type, and who the directory says made it", async (t) => {
  const { get } = await setUp(t);
  const all = kinds((await get("/api/changes")).json());
  t.same(kinds((await get("/api/changes?entryType=user")).json()), all, "by name");
  t.same(kinds((await get("/api/changes?entryType=Users,group")).json()), all, "or by path");
  t.same((await get("/api/changes?entryType=groups")).json().nodes, []);
  const wrong = await get("/api/changes?entryType=shoe");
  t.equal(wrong.statusCode, 400);
  t.match(wrong.json(), {
    code: "ANNAL_PARAMETER_INVALID",
    parameter: "entryType",
    expected: ["user", "group"],
  });
  t.same(kinds((await get("/api/changes?actor=UID%3DALICE")).json()), ["modify alice"]);
  t.same(
    kinds((await get("/api/changes?actor=admin&type=delete")).json()),
    [],
    "bob's deletion names no actor",
  );
  t.equal(kinds((await get("/api/changes?actor=cn%3Dadmin")).json()).length, 4);
  t.same(
    (await get("/api/changes?actor=%25")).json().nodes,
    [],
    "% is a character, not a wildcard",
  );
});

t.test("adds: the changes that added a value, a person's group memberships", async (t) => {
  const { get, history } = await setUp(t);
  const [ALICE, BOB] = [`uid=alice,${PEOPLE}`, `uid=bob,${PEOPLE}`];
  const admins = await history.add(
    {
      dn: `cn=admins,${GROUPS}`,
      type: "group",
      attributes: { objectClass: ["groupOfNames"], cn: ["admins"], member: [ALICE] },
    },
    { at: hoursAgo(5) },
  );
  await history.modify(admins, { member: [ALICE, BOB] }, { at: hoursAgo(4) });
  const notes = await history.add(
    {
      dn: `cn=notes,${GROUPS}`,
      type: "group",
      attributes: { objectClass: ["groupOfNames"], cn: ["notes"], member: [ALICE] },
    },
    { at: hoursAgo(4) },
  );
  // Bob's DN in another attribute, and Bob taken out again: neither adds him to a group.
  await history.modify(notes, { description: [BOB] }, { at: hoursAgo(3) });
  await history.modify(admins, { member: [ALICE] }, { at: hoursAgo(2) });
  await history.settled();
  const found = async (query: string) =>
    ((await get(`/api/changes?${query}`)).json() as { nodes: Change[] }).nodes.map(
      (c) => `${c.type} ${c.dn.split(",")[0]}`,
    );

  t.same(
    await found(`affects=member&adds=${q(BOB.toUpperCase())}`),
    ["modify cn=admins"],
    "Bob's one membership, whatever the case of his DN",
  );
  t.same(
    await found(`affects=member&adds=${q(ALICE)}`),
    ["add cn=admins", "add cn=notes"],
    "a value in an added entry's list",
  );
  t.same(
    await found(`adds=${q(BOB)}`),
    ["modify cn=admins", "modify cn=notes"],
    "without affects, any attribute",
  );
  t.same(await found(`affects=member&adds=${q(`uid=carol,${PEOPLE}`)}`), []);
  // Empty is absent, as for every parameter of the channel; blank is a mistake.
  t.equal((await found("adds=")).length, 11, "no filter: every change");
  const blank = await get("/api/changes?adds=%20%20");
  t.equal(blank.statusCode, 400);
  t.match(blank.json(), { code: "ANNAL_PARAMETER_INVALID", parameter: "adds" });
});

t.test("range and since bound the feed by when changes happened", async (t) => {
  const { get } = await setUp(t);
  const window = async (query: string) => {
    const response = await get(`/api/changes?${query}`);
    t.equal(response.statusCode, 200, `${query}: ${response.body}`);
    return kinds(response.json());
  };
  t.same(await window("range=24h"), ["modify alice", "modrdn alice2", "delete bob"]);
  t.same(await window("range=PT3H"), ["modrdn alice2", "delete bob"]);
  t.same(await window(`since=${q("now-31h")}`), [
    "modify alice",
    "modrdn alice2",
    "add bob",
    "delete bob",
  ]);
  t.same(
    await window("since=48h"),
    await window(`since=${q("now-48h")}`),
    "a duration means that long ago",
  );
  // Sunday 2026-11-22 16:30 in Berlin.
  t.same(
    await window("since=today"),
    ["modrdn alice2", "delete bob"],
    "today: from 00:00 in the zone",
  );
  t.same(await window("since=yesterday"), [
    "modify alice",
    "modrdn alice2",
    "add bob",
    "delete bob",
  ]);
  t.same(
    await window(`since=yesterday&range=1d`),
    ["modify alice", "add bob"],
    "since with range: a window",
  );
  t.same(await window(`since=${q("this week")}`), [
    "modify alice",
    "modify alice",
    "modrdn alice2",
    "add bob",
    "delete bob",
  ]);
  t.same(await window(`since=${q("last week")}`), await window(""));
  t.same(await window(`since=${q("Last 3 Days")}`), await window(`since=${q("now-72h")}`));
  t.same(await window(`since=${q("2 days ago")}`), [
    "modify alice",
    "modrdn alice2",
    "add bob",
    "delete bob",
  ]);
  t.same(await window(`since=${q("this month")}`), await window(""));
  t.same(await window(`since=${q("2026-11-21T17:00:00+01:00")}`), ["modrdn alice2", "delete bob"]);
  t.same(
    await window(`since=2026-11-22`),
    ["modrdn alice2", "delete bob"],
    "a date: its start in the zone",
  );
  for (const [name, value] of [
    ["since", "the day before"],
    ["since", "2026-13-01"],
    ["range", "0h"],
    ["range", "yesterday"],
  ] as const) {
    const response = await get(`/api/changes?${name}=${q(value)}`);
    t.match(
      response.json(),
      { status: 400, code: "ANNAL_PARAMETER_INVALID", parameter: name, expected: String },
      value,
    );
  }
  // Durations that overflow the calendar: a 400 naming range, never a 500.
  for (const query of [
    "range=999999999w",
    "range=P99999Y",
    `since=${q("9999-12-31T23:59:59Z")}&range=P1Y`,
    `since=${q("0001-01-01T00:00:00Z")}&range=999999999d`,
  ]) {
    const response = await get(`/api/changes?${query}`);
    t.equal(response.statusCode, 400, query);
    t.match(response.json(), { code: "ANNAL_PARAMETER_INVALID", parameter: "range" }, query);
  }
});

t.test("phrases are read in the configured time zone", async (t) => {
  const { get } = await setUp(t, "America/Los_Angeles");
  // 07:30 on Sunday in Los Angeles: today began at 08:00 UTC.
  const body = (await get("/api/changes?since=today")).json();
  t.same(kinds(body), ["modrdn alice2", "delete bob"]);
  const local = (await get(`/api/changes?since=${q("2026-11-21T08:00")}`)).json();
  t.same(kinds(local), ["modrdn alice2", "delete bob"], "a time without offset is local");
});

t.test("the feed pages forward and backward by cursor", async (t) => {
  const { get } = await setUp(t);
  const all = kinds((await get("/api/changes")).json());
  const pages: string[] = [];
  let after = "";
  for (let i = 0; i < 10; i++) {
    const body = (await get(`/api/changes?first=4${after}`)).json();
    pages.push(...kinds(body));
    t.equal(body.pageInfo.hasPreviousPage, i > 0);
    if (!body.pageInfo.hasNextPage) break;
    t.equal(
      body.pageInfo.endCursor,
      body.nodes.at(-1).cursor,
      "endCursor is the last node's cursor",
    );
    after = `&after=${q(body.pageInfo.endCursor)}`;
  }
  t.same(pages, all);
  const last = (await get("/api/changes?last=2")).json();
  t.same(kinds(last), all.slice(-2));
  t.match(last.pageInfo, { hasPreviousPage: true, hasNextPage: false });
  const before = (await get(`/api/changes?limit=3&before=${q(last.pageInfo.startCursor)}`)).json();
  t.same(kinds(before), all.slice(1, 4));
  t.match(before.pageInfo, { hasPreviousPage: true, hasNextPage: true });
  const fromNode = (await get(`/api/changes?after=${q(before.nodes[0].cursor)}&first=1`)).json();
  t.same(kinds(fromNode), all.slice(2, 3), "any node's cursor is a place to read on from");

  const [body, mac] = before.pageInfo.endCursor.split(".");
  const payload = JSON.parse(Buffer.from(body, "base64url").toString());
  payload.p[1] = 1;
  const forged = `${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${mac}`;
  t.match((await get(`/api/changes?after=${q(forged)}`)).json(), {
    status: 400,
    code: "ANNAL_CURSOR_INVALID",
  });
  const searchCursor = (await get("/api/entries/users?first=1")).json().pageInfo.endCursor;
  t.match((await get(`/api/changes?after=${q(searchCursor)}`)).json(), {
    status: 400,
    code: "ANNAL_CURSOR_MISMATCH",
  });
});

t.test("one entry's changes, by any of its IDs, deleted entries included", async (t) => {
  const { get, alice, bob } = await setUp(t);
  const byUuid = (await get(`/api/entries/users/${alice}/changes`)).json();
  t.same(kinds(byUuid), ["add alice", "modify alice", "modify alice", "modrdn alice2"]);
  const byDn = (
    await get(`/api/entries/users/${q(`uid=alice2,${PEOPLE}`)}/changes?type=modify`)
  ).json();
  t.same(kinds(byDn), ["modify alice", "modify alice"]);
  const global = Buffer.from(`user:${bob}`).toString("base64");
  t.same(kinds((await get(`/api/entries/users/${q(global)}/changes`)).json()), [
    "add bob",
    "delete bob",
  ]);
  const deletedByDn = (
    await get(`/api/entries/users/${q(`uid=bob,${PEOPLE}`)}/changes?include=count`)
  ).json();
  t.same(deletedByDn, { count: 2 }, "a deleted entry's history by its last DN");
  const page = (await get(`/api/entries/users/${alice}/changes?first=1&since=5d`)).json();
  t.same(kinds(page), ["modify alice"]);
  const rest = (
    await get(`/api/entries/users/${alice}/changes?since=5d&after=${q(page.pageInfo.endCursor)}`)
  ).json();
  t.same(kinds(rest), ["modify alice", "modrdn alice2"]);
  t.match((await get(`/api/entries/groups/${alice}/changes`)).json(), {
    status: 404,
    reason: "other-type",
  });
  t.match((await get("/api/entries/users/00000000-0000-4000-8000-000000000000/changes")).json(), {
    status: 404,
    reason: "unknown",
  });
});
