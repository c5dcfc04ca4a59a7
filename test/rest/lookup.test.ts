import t, { type Test } from "tap";
import { GROUPS, PEOPLE, restHarness } from "./fixtures/harness.ts";

t.setTimeout(300_000);

const q = encodeURIComponent;
const JAN = new Date("2026-01-10T12:00:00Z");
const FEB = new Date("2026-02-10T12:00:00Z");
const MAR = new Date("2026-03-10T12:00:00Z");
const NOW = new Date("2026-11-22T12:00:00Z");

/** Alice: added in January, mail changed in February, renamed in March. Bob: deleted in March. */
async function setUp(t: Test) {
  const harness = await restHarness(t, { now: () => NOW });
  const { history } = harness;
  const alice = await history.add(
    {
      dn: `uid=alice,${PEOPLE}`,
      type: "user",
      attributes: {
        objectClass: ["inetOrgPerson"],
        uid: ["alice"],
        cn: ["Alice Liddell"],
        sn: ["Liddell"],
        mail: ["alice@old.example.org"],
      },
    },
    { at: JAN },
  );
  await history.modify(alice, { mail: ["alice@example.org"] }, { at: FEB });
  await history.rename(alice, `uid=alice.liddell,${PEOPLE}`, {
    at: MAR,
    attributes: { ...history.states.get(alice)!.attributes, uid: ["alice.liddell"] },
  });
  const bob = await history.add(
    {
      dn: `uid=bob,${PEOPLE}`,
      type: "user",
      attributes: { objectClass: ["inetOrgPerson"], uid: ["bob"], cn: ["Bob"], sn: ["Builder"] },
    },
    { at: JAN },
  );
  await history.delete(bob, { at: MAR });
  const group = await history.add(
    {
      dn: `cn=staff,${GROUPS}`,
      type: "group",
      attributes: { objectClass: ["groupOfNames"], cn: ["staff"], member: [`uid=bob,${PEOPLE}`] },
    },
    { at: JAN },
  );
  await history.settled();
  return { ...harness, alice, bob, group };
}

t.test("{id} takes an entryUUID, a URL-encoded DN, or the global ID", async (t) => {
  const { get, alice } = await setUp(t);
  const byUuid = await get(`/api/entries/users/${alice}`);
  t.equal(byUuid.statusCode, 200, byUuid.body);
  const node = byUuid.json();
  t.equal(node.dn, `uid=alice.liddell,${PEOPLE}`);
  t.equal(node.entryUUID, alice);
  for (const id of [
    alice.toUpperCase(),
    q(`uid=alice.liddell,${PEOPLE}`),
    q(`UID=Alice.Liddell, OU=People, DC=example, DC=org`),
    q(node.id),
    node.id.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, ""),
  ]) {
    const response = await get(`/api/entries/users/${id}`);
    t.equal(response.statusCode, 200, id);
    t.same(response.json(), node, `${id} names the same entry`);
  }
});

t.test("an {id} of another kind or type is refused with a reason", async (t) => {
  const { get, group, alice } = await setUp(t);
  const global = Buffer.from(`group:${group}`).toString("base64");
  const wrongType = await get(`/api/entries/users/${q(global)}`);
  t.equal(wrongType.statusCode, 404);
  t.match(wrongType.json(), { code: "ANNAL_ENTRY_NOT_FOUND", reason: "other-type" });
  const groupByUuid = await get(`/api/entries/users/${group}`);
  t.match(groupByUuid.json(), { status: 404, reason: "other-type", detail: /type "group"/ });
  t.equal((await get(`/api/entries/groups/${group}`)).statusCode, 200);
  const unknown = await get("/api/entries/users/00000000-0000-4000-8000-000000000000");
  t.match(unknown.json(), { status: 404, code: "ANNAL_ENTRY_NOT_FOUND", reason: "unknown" });
  const notAnId = await get("/api/entries/users/hello");
  t.match(notAnId.json(), { status: 400, code: "ANNAL_ID_INVALID" });
  const badDn = await get(`/api/entries/users/${q("uid=a,,dc=x")}`);
  t.match(badDn.json(), { status: 400, code: "ANNAL_DN_INVALID" });
  const unencoded = await get(`/api/entries/users/uid=alice/ou=people`);
  t.match(unencoded.json(), { status: 404, code: "ANNAL_NOT_FOUND", hint: /URL-encode/ });
  const noDn = await get(`/api/entries/users/${q(`uid=nobody,${PEOPLE}`)}`);
  t.match(noDn.json(), { status: 404, reason: "unknown" });
  t.equal((await get(`/api/entries/users/${alice}/x`)).statusCode, 404);
});

t.test("at: the entry as it was at a moment, ISO 8601 or relative", async (t) => {
  const { get, alice } = await setUp(t);
  const inJanuary = await get(`/api/entries/users/${alice}?at=2026-01-20`);
  t.equal(inJanuary.statusCode, 200);
  t.match(inJanuary.json(), { dn: `uid=alice,${PEOPLE}`, mail: ["alice@old.example.org"] });
  t.equal(inJanuary.headers["last-modified"], JAN.toUTCString());
  const inFebruary = await get(`/api/entries/users/${alice}?at=${q("2026-02-10T12:00:00Z")}`);
  t.same(inFebruary.json().mail, ["alice@example.org"], "a version starts at its change");
  t.equal(inFebruary.json().dn, `uid=alice,${PEOPLE}`);
  const justBefore = await get(`/api/entries/users/${alice}?at=${q("2026-02-10T11:59:59.999Z")}`);
  t.same(justBefore.json().mail, ["alice@old.example.org"]);
  const relative = await get(`/api/entries/users/${alice}?at=now-200d`); // 2026-05-06
  t.equal(relative.json().dn, `uid=alice.liddell,${PEOPLE}`);
  const phrase = await get(`/api/entries/users/${alice}?at=${q("2026-03-01T00:00+01:00")}`);
  t.equal(phrase.json().dn, `uid=alice,${PEOPLE}`, "an offset is honoured");
  const byOldDn = await get(`/api/entries/users/${q(`uid=alice,${PEOPLE}`)}?at=2026-02-15`);
  t.equal(byOldDn.json().entryUUID, alice, "a DN with at names the entry that had it then");
  const oldDnNow = await get(`/api/entries/users/${q(`uid=alice,${PEOPLE}`)}`);
  t.equal(oldDnNow.statusCode, 404, "and not now");
});

t.test("at before creation or after deletion is a 404 that says why and since when", async (t) => {
  const { get, alice, bob } = await setUp(t);
  const early = await get(`/api/entries/users/${alice}?at=2025-12-31`);
  t.equal(early.statusCode, 404);
  t.match(early.json(), {
    code: "ANNAL_ENTRY_NOT_FOUND",
    reason: "not-yet",
    since: JAN.toISOString(),
    detail: /did not exist yet/,
  });
  const gone = await get(`/api/entries/users/${bob}?at=2026-04-01`);
  t.match(gone.json(), { status: 404, reason: "deleted", since: MAR.toISOString() });
  const goneNow = await get(`/api/entries/users/${bob}`);
  t.match(goneNow.json(), { status: 404, reason: "deleted", since: MAR.toISOString() });
  const before = await get(`/api/entries/users/${bob}?at=2026-02-01`);
  t.equal(before.json().cn[0], "Bob", "a deleted entry is there before its deletion");
  const bad = await get(`/api/entries/users/${alice}?at=tomorrowish`);
  t.match(bad.json(), { status: 400, code: "ANNAL_PARAMETER_INVALID", parameter: "at" });
});

t.test("lookups carry a weak ETag and Last-Modified and answer 304 when unchanged", async (t) => {
  const { get, alice, history } = await setUp(t);
  const first = await get(`/api/entries/users/${alice}`);
  const etag = first.headers.etag as string;
  t.match(etag, /^W\/"[A-Za-z0-9_-]+"$/);
  t.equal(first.headers["cache-control"], "private, max-age=0, must-revalidate");
  t.equal(first.headers["last-modified"], MAR.toUTCString());

  const same = await get(`/api/entries/users/${alice}`, { "if-none-match": etag });
  t.equal(same.statusCode, 304);
  t.equal(same.body, "");
  t.equal(same.headers.etag, etag);
  t.equal(same.headers["cache-control"], "private, max-age=0, must-revalidate");
  t.equal(
    (await get(`/api/entries/users/${alice}`, { "if-none-match": `"x", ${etag}` })).statusCode,
    304,
  );
  t.equal((await get(`/api/entries/users/${alice}`, { "if-none-match": "*" })).statusCode, 304);
  t.equal(
    (await get(`/api/entries/users/${alice}`, { "if-none-match": etag.slice(2) })).statusCode,
    304,
    "weak comparison",
  );
  t.equal(
    (await get(`/api/entries/users/${alice}`, { "if-none-match": 'W/"other"' })).statusCode,
    200,
  );

  const since = await get(`/api/entries/users/${alice}`, {
    "if-modified-since": MAR.toUTCString(),
  });
  t.equal(since.statusCode, 304);
  const older = new Date(MAR.getTime() - 1000).toUTCString();
  t.equal(
    (await get(`/api/entries/users/${alice}`, { "if-modified-since": older })).statusCode,
    200,
  );
  t.equal(
    (
      await get(`/api/entries/users/${alice}`, {
        "if-none-match": 'W/"other"',
        "if-modified-since": MAR.toUTCString(),
      })
    ).statusCode,
    200,
    "If-None-Match wins over If-Modified-Since",
  );

  const withFields = await get(`/api/entries/users/${alice}?fields=cn`);
  t.not(withFields.headers.etag, etag, "the ETag changes with fields");
  const past = await get(`/api/entries/users/${alice}?at=2026-01-20`);
  t.not(past.headers.etag, etag, "and with at, when the entry differed then");
  t.equal(
    (
      await get(`/api/entries/users/${alice}?at=2026-01-20`, {
        "if-none-match": past.headers.etag as string,
      })
    ).statusCode,
    304,
  );
  const samePast = await get(`/api/entries/users/${alice}?at=2026-01-25`);
  t.equal(samePast.headers.etag, past.headers.etag, "the same version gives the same ETag");

  await history.modify(alice, { title: ["Lead"] }, { at: new Date("2026-11-01T00:00:00Z") });
  await history.settled();
  const changed = await get(`/api/entries/users/${alice}`, { "if-none-match": etag });
  t.equal(changed.statusCode, 200, "a change makes the old ETag stale");
  t.not(changed.headers.etag, etag);
});

t.test("lookup fields and strict handling", async (t) => {
  const { get, alice } = await setUp(t);
  const node = (await get(`/api/entries/users/${alice}?fields=cn,+`)).json();
  t.same(node.cn, ["Alice Liddell"]);
  t.equal(node.modifyTimestamp, MAR.toISOString().replace(".000", ""));
  t.same(node, (await get(`/api/entries/users/${alice}?fields=cn,%2B`)).json(), "+ encoded or not");
  const strict = await get(`/api/entries/users/${alice}?fields=cn,nope`, {
    prefer: "handling=strict",
  });
  t.match(strict.json(), { status: 400, code: "ANNAL_ATTRIBUTES_UNKNOWN", unknown: ["nope"] });
  t.equal(strict.headers["preference-applied"], "handling=strict");
});
