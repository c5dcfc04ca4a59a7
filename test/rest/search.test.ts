import { pino } from "pino";
import t, { type Test } from "tap";
import {
  addPeople,
  GROUPS,
  PEOPLE,
  restHarness,
  testConfig,
  type RestHarness,
} from "./fixtures/harness.ts";

// Each test builds its own database and projector; the file runs longer than tap's 30 s default.
t.setTimeout(300_000);

const q = encodeURIComponent;

async function setUp(t: Test, harness?: RestHarness) {
  const h = harness ?? (await restHarness(t));
  const ids = await addPeople(h.history);
  await h.history.add({
    dn: `cn=engineers,${GROUPS}`,
    type: "group",
    attributes: {
      objectClass: ["groupOfNames"],
      cn: ["engineers"],
      member: [`uid=alice,${PEOPLE}`],
    },
  });
  await h.history.settled();
  return { ...h, ids };
}

const uids = (body: { nodes: { dn: string }[] }): string[] =>
  body.nodes.map((node) => /^uid=([^,]+)/.exec(node.dn)?.[1] ?? "");

t.test("a search answers nodes with identifiers and typed attributes, and pageInfo", async (t) => {
  const { get, ids } = await setUp(t);
  const response = await get(`/api/entries/users?filter=${q("uid = alice")}`);
  t.equal(response.statusCode, 200, response.body);
  t.equal(response.headers["cache-control"], "no-store");
  t.match(response.headers["content-type"], /^application\/json/);
  const body = response.json();
  t.equal(body.nodes.length, 1);
  const alice = body.nodes[0];
  t.equal(alice.entryUUID, ids.alice);
  t.equal(alice.id, Buffer.from(`user:${ids.alice}`).toString("base64"));
  t.equal(alice.dn, `uid=alice,${PEOPLE}`);
  t.equal(alice.type, "user");
  t.same(alice.cn, ["Alice Liddell"], "multi-valued: a list");
  t.equal(alice.uidNumber, 1001, "single-valued integer: a number");
  t.equal(alice.accountActive, true, "single-valued boolean: true/false");
  t.same(alice.telephoneNumber, ["+49 30 1001", "+49 170 1001"]);
  t.notOk("modifyTimestamp" in alice, "operational attributes only with +");
  t.same(Object.keys(body), ["nodes", "pageInfo"], "default include: nodes, pageInfo");
  t.same(
    { ...body.pageInfo, startCursor: "", endCursor: "" },
    { hasNextPage: false, hasPreviousPage: false, startCursor: "", endCursor: "" },
  );
  t.type(body.pageInfo.endCursor, "string");
});

t.test("a search serves only entries of its type, from the current state", async (t) => {
  const { get, history, ids } = await setUp(t);
  await history.delete(ids.bob!);
  await history.rename(ids.carol!, `uid=carol2,${PEOPLE}`);
  await history.settled();
  const users = (await get("/api/entries/users")).json();
  t.same(uids(users).sort(), ["alice", "carol2", "dave", "erin"]);
  const groups = (await get("/api/entries/groups")).json();
  t.same(
    groups.nodes.map((node: { cn: string[] }) => node.cn),
    [["engineers"]],
  );
});

t.test("the four filter languages, detected by their first characters, select alike", async (t) => {
  const { get } = await setUp(t);
  const filters = [
    '{"title": "engineer", "sn": "Meyer"}',
    "(&(title=Engineer)(sn=meyer))",
    "title = Engineer AND sn = Meyer",
    'title eq "Engineer" and sn eq "MEYER"',
  ];
  const seen = [];
  for (const filter of filters) {
    const response = await get(`/api/entries/users?filter=${q(filter)}`);
    t.equal(response.statusCode, 200, `${filter}: ${response.body}`);
    seen.push(uids(response.json()));
  }
  for (const result of seen) t.same(result, ["carol"]);
  for (const filter of [
    "(&(title=Engineer)(sn=M*))",
    "title = Engineer AND sn = M*",
    'title eq "Engineer" and sn sw "m"',
  ]) {
    t.same(uids((await get(`/api/entries/users?filter=${q(filter)}`)).json()), ["carol"], filter);
  }
  const either = await get(`/api/entries/users?filter=${q("sn = meyer OR uid = erin")}`);
  t.same(uids(either.json()).sort(), ["carol", "dave", "erin"], "case-insensitive, OR");
  const scim = await get(`/api/entries/users?filter=${q('uidNumber gt "1003" and not (mail pr)')}`);
  t.same(uids(scim.json()), ["erin"], "SCIM gt, not, pr");
});

t.test("a malformed filter is a 400 with the position and what was expected", async (t) => {
  const { get } = await setUp(t);
  const response = await get(`/api/entries/users?filter=${q("(&(cn=a)(sn=b)")}`);
  t.equal(response.statusCode, 400);
  t.match(response.headers["content-type"], /^application\/problem\+json/);
  t.match(response.json(), {
    type: "urn:annal:problem:ANNAL_FILTER_SYNTAX",
    title: "Bad Request",
    status: 400,
    code: "ANNAL_FILTER_SYNTAX",
    parameter: "filter",
    format: "ldap",
    position: 14,
    expected: '")"',
    detail: String,
    hint: String,
  });
});

t.test("a filter may test operational attributes", async (t) => {
  const { get, ids } = await setUp(t);
  const byUuid = await get(`/api/entries/users?filter=${q(`entryUUID = ${ids.dave}`)}`);
  t.same(uids(byUuid.json()), ["dave"]);
  const byTime = await get(`/api/entries/users?filter=${q("modifyTimestamp >= 20261101000000Z")}`);
  t.equal(byTime.json().nodes.length, 5);
});

t.test("fields: *, +, 1.1 and named attributes", async (t) => {
  const { get, ids } = await setUp(t);
  const only = async (fields: string, uid = "erin") =>
    (await get(`/api/entries/users?filter=${q(`uid = ${uid}`)}&fields=${q(fields)}`)).json()
      .nodes[0];
  t.same(
    Object.keys(await only("1.1")),
    ["id", "entryUUID", "dn", "type"],
    "1.1: identifiers only",
  );
  const named = await only("MAIL,commonName,uidnumber,dn");
  t.same(Object.keys(named), ["id", "entryUUID", "dn", "type", "mail", "cn", "uidNumber"]);
  t.equal(named.mail, null, "a named attribute the entry lacks is null");
  t.same(named.cn, ["Erin Zeller"], "aliases and letter case resolve to canonical names");
  const operational = await only("+");
  t.equal(operational.entryUUID, ids.erin);
  t.equal(operational.modifyTimestamp, "2026-11-01T09:00:00Z", "generalized time as ISO 8601");
  t.notOk("cn" in operational, "+ alone: no user attributes");
  const both = await only("*,+");
  t.ok("cn" in both && "createTimestamp" in both);
  const defaults = await only("*");
  t.same(defaults, (await get(`/api/entries/users?filter=${q("uid = erin")}`)).json().nodes[0]);
  t.same(Object.keys(await only("1.1,sn")).at(-1), "sn", "1.1 beside names is ignored");
});

t.test("sort orders by keys, - descending, missing values last, ties by entryUUID", async (t) => {
  const { get } = await setUp(t);
  const order = async (sort: string) =>
    uids((await get(`/api/entries/users?sort=${q(sort)}`)).json());
  t.same(await order("sn,-cn"), ["bob", "alice", "dave", "carol", "erin"]);
  t.same(await order("-uidNumber"), ["erin", "dave", "carol", "bob", "alice"]);
  t.same(await order("mail"), ["alice", "bob", "carol", "dave", "erin"], "no mail: last");
  t.same(
    await order("-mail"),
    ["dave", "carol", "bob", "alice", "erin"],
    "last when descending too",
  );
  t.same(await order("-dn"), ["erin", "dave", "carol", "bob", "alice"]);
  const malformed = await get(`/api/entries/users?sort=${q("sn,-")}`);
  t.equal(malformed.statusCode, 400);
  t.equal(malformed.json().code, "ANNAL_PARAMETER_INVALID");
});

t.test(
  "pages forward with first/after and backward with last/before, never repeating",
  async (t) => {
    const { get } = await setUp(t);
    const forward: string[] = [];
    let after = "";
    let pages = 0;
    for (;;) {
      const body = (await get(`/api/entries/users?sort=sn,uid&first=2${after}`)).json();
      forward.push(...uids(body));
      pages++;
      t.equal(body.pageInfo.hasPreviousPage, pages > 1);
      if (!body.pageInfo.hasNextPage) break;
      after = `&after=${q(body.pageInfo.endCursor)}`;
    }
    t.same(forward, ["bob", "alice", "carol", "dave", "erin"]);
    t.equal(pages, 3);

    const backward: string[][] = [];
    let before = "";
    for (;;) {
      const body = (await get(`/api/entries/users?sort=sn,uid&last=2${before}`)).json();
      backward.unshift(uids(body));
      if (!body.pageInfo.hasPreviousPage) break;
      t.equal(body.pageInfo.hasNextPage, before !== "");
      before = `&before=${q(body.pageInfo.startCursor)}`;
    }
    t.same(backward, [["bob"], ["alice", "carol"], ["dave", "erin"]]);

    const viaLimit = (await get("/api/entries/users?sort=sn,uid&limit=3")).json();
    t.same(uids(viaLimit), ["bob", "alice", "carol"], "limit is first without before");
    const back = (
      await get(`/api/entries/users?sort=sn,uid&limit=1&before=${q(viaLimit.pageInfo.endCursor)}`)
    ).json();
    t.same(uids(back), ["alice"], "and last with before");
  },
);

t.test("the page size has a configurable default and maximum", async (t) => {
  const harness = await restHarness(t, {
    config: testConfig("[rest]\npageSize = 2\nmaxPageSize = 3"),
  });
  const { get } = await setUp(t, harness);
  t.equal((await get("/api/entries/users")).json().nodes.length, 2, "default page size");
  t.equal((await get("/api/entries/users?first=3")).json().nodes.length, 3);
  for (const wrong of ["first=4", "last=0", "limit=-1", "first=two", "first=1.5"]) {
    const response = await get(`/api/entries/users?${wrong}`);
    t.equal(response.statusCode, 400, wrong);
    t.match(response.json(), { code: "ANNAL_PARAMETER_INVALID", parameter: wrong.split("=")[0] });
  }
});

t.test("contradicting pagination parameters are refused", async (t) => {
  const { get } = await setUp(t);
  const cursor = (await get("/api/entries/users?first=1")).json().pageInfo.endCursor;
  for (const query of [
    `first=1&last=1`,
    `first=1&before=${q(cursor)}`,
    `last=1&after=${q(cursor)}`,
    `after=${q(cursor)}&before=${q(cursor)}`,
    `limit=1&first=1`,
  ]) {
    const response = await get(`/api/entries/users?${query}`);
    t.equal(response.statusCode, 400, query);
    t.equal(response.json().code, "ANNAL_PAGINATION_CONFLICT", query);
  }
});

t.test("a tampered, foreign or misapplied cursor is a 400", async (t) => {
  const { get } = await setUp(t);
  const cursor: string = (await get("/api/entries/users?sort=sn&first=1")).json().pageInfo
    .endCursor;
  const [body, mac] = cursor.split(".") as [string, string];
  const payload = JSON.parse(Buffer.from(body, "base64url").toString());
  payload.p[0] = "a";
  const forged = `${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${mac}`;
  for (const bad of [forged, `${body}.${mac.slice(1)}A`, "garbage", "a.b", `${cursor}x`]) {
    const response = await get(`/api/entries/users?sort=sn&after=${q(bad)}`);
    t.equal(response.statusCode, 400, bad);
    t.match(response.json(), { code: "ANNAL_CURSOR_INVALID", parameter: "after" });
  }
  const otherSort = await get(`/api/entries/users?sort=cn&after=${q(cursor)}`);
  t.match(otherSort.json(), { status: 400, code: "ANNAL_CURSOR_MISMATCH" });
  const otherType = await get(`/api/entries/groups?sort=sn&after=${q(cursor)}`);
  t.equal(otherType.json().code, "ANNAL_CURSOR_MISMATCH");

  const elsewhere = await setUp(t);
  const foreign = (await elsewhere.get("/api/entries/users?sort=sn&first=1")).json().pageInfo
    .endCursor;
  const response = await get(`/api/entries/users?sort=sn&after=${q(foreign)}`);
  t.match(response.json(), { status: 400, code: "ANNAL_CURSOR_FOREIGN" });
});

t.test("include=count counts; count alone reads no entries", async (t) => {
  const { get } = await setUp(t);
  const all = (
    await get(`/api/entries/users?include=count&filter=${q("title = Engineer")}`)
  ).json();
  t.same(all, { count: 3 });
  const both = (await get("/api/entries/users?include=nodes,count&first=1")).json();
  t.same(Object.keys(both), ["nodes", "count"]);
  t.equal(both.count, 5);
  const wrong = await get("/api/entries/users?include=nodes,edges");
  t.match(wrong.json(), { status: 400, code: "ANNAL_PARAMETER_INVALID", parameter: "include" });
});

t.test(
  "lenient handling ignores unknown attributes; strict refuses them, listing them",
  async (t) => {
    const { get } = await setUp(t);
    const lenient = await get(`/api/entries/users?filter=${q("shoeSize = 9")}&fields=cn,colour`);
    t.equal(lenient.statusCode, 200);
    t.same(lenient.json().nodes, [], "an unknown attribute matches nothing");
    t.equal(
      lenient.headers["annal-unknown-attributes"],
      "shoeSize, colour",
      "but the answer names what matched nothing, so an empty page is not taken for an answer",
    );
    t.notOk(lenient.headers["preference-applied"], "no preference stated, none reported");
    const negated = await get(`/api/entries/users?filter=${q("NOT shoeSize = 9")}&fields=colour`, {
      prefer: "handling=lenient",
    });
    t.equal(negated.json().nodes.length, 5, "so NOT of it matches every entry");
    t.equal(negated.headers["preference-applied"], "handling=lenient");
    t.same(Object.keys(negated.json().nodes[0]), ["id", "entryUUID", "dn", "type"]);

    const strict = await get(
      `/api/entries/users?filter=${q("shoeSize = 9 OR cn = x")}&fields=cn,colour&sort=hue`,
      { prefer: "handling=strict" },
    );
    t.equal(strict.statusCode, 400);
    t.equal(strict.headers["preference-applied"], "handling=strict");
    t.match(strict.json(), {
      code: "ANNAL_ATTRIBUTES_UNKNOWN",
      unknown: ["shoeSize", "colour", "hue"],
      parameters: { filter: ["shoeSize"], fields: ["colour"], sort: ["hue"] },
    });
    const known = await get(`/api/entries/users?filter=${q("CN = x")}`, {
      prefer: "respond-async, handling=strict",
    });
    t.equal(known.statusCode, 200, "strict passes when every name is known");
    t.notOk(known.headers["annal-unknown-attributes"], "nothing unknown, no header");
  },
);

t.test(
  "a filter on an attribute no type has answers an empty page that says so (lenient), or is refused (strict)",
  async (t) => {
    const { get } = await setUp(t);
    const lenient = await get(`/api/entries/users?filter=${q("(titel=Engineer)")}`);
    t.equal(lenient.statusCode, 200);
    t.same(lenient.json().nodes, []);
    t.equal(lenient.headers["annal-unknown-attributes"], "titel");
    const meant = await get(`/api/entries/users?filter=${q("(title=Engineer)")}`);
    t.ok(meant.json().nodes.length > 0, "the attribute meant matches");
    t.notOk(meant.headers["annal-unknown-attributes"]);
    const strict = await get(`/api/entries/users?filter=${q("(titel=Engineer)")}`, {
      prefer: "handling=strict",
    });
    t.match(strict.json(), {
      status: 400,
      code: "ANNAL_ATTRIBUTES_UNKNOWN",
      unknown: ["titel"],
      parameters: { filter: ["titel"] },
    });
    const lookup = await get(
      `/api/entries/users/${encodeURIComponent(`uid=alice,${PEOPLE}`)}?fields=cn,colour`,
    );
    t.equal(lookup.statusCode, 200);
    t.equal(lookup.headers["annal-unknown-attributes"], "colour", "a lookup's fields too");
  },
);

t.test("query parameters: repeated ones refused, unknown ones strict-only", async (t) => {
  const { get } = await setUp(t);
  const repeated = await get("/api/entries/users?first=1&first=2");
  t.match(repeated.json(), { status: 400, code: "ANNAL_PARAMETER_REPEATED", parameter: "first" });
  const lenient = await get("/api/entries/users?filer=x");
  t.equal(lenient.statusCode, 200, "lenient: ignored");
  t.equal(lenient.headers["annal-ignored-parameters"], "filer", "and named in the answer");
  t.notOk(
    (await get("/api/entries/users?filter=x")).headers["annal-ignored-parameters"],
    "nothing ignored, no header",
  );
  const strict = await get("/api/entries/users?filer=x", { prefer: "handling=strict" });
  t.match(strict.json(), { status: 400, code: "ANNAL_PARAMETER_UNKNOWN", unknown: ["filer"] });
  t.equal((await get("/api/entries/users?filter=&fields=")).statusCode, 200, "empty is absent");
});

t.test(
  "ignored query parameters are named percent-encoded, one of each, and logged at debug",
  async (t) => {
    const lines: Record<string, unknown>[] = [];
    const log = pino(
      { level: "debug" },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const h = await restHarness(t, { log });
    const { get } = await setUp(t, h);
    const response = await get(
      `/api/entries/users?filtr=${q("(uid=alice)")}&${q("na me\r\n")}=1&filtr2=a&filtr2=b`,
    );
    t.equal(response.statusCode, 200, response.body);
    t.equal(response.json().nodes.length, 5, "answered as if the parameters were not there");
    t.equal(response.headers["annal-ignored-parameters"], "filtr, na%20me%0D%0A, filtr2");
    const logged = lines.find((line) => Array.isArray(line.ignoredParameters));
    t.match(logged, {
      level: 20,
      url: "/api/entries/users",
      ignoredParameters: ["filtr", "na me\r\n", "filtr2"],
    });
    t.notMatch(JSON.stringify(logged), /uid=alice/, "names only, never their values");
  },
);

t.test("an unknown type is a 404 naming the types", async (t) => {
  const { get } = await setUp(t);
  const response = await get("/api/entries/user");
  t.equal(response.statusCode, 404);
  t.match(response.json(), {
    type: "urn:annal:problem:ANNAL_TYPE_UNKNOWN",
    code: "ANNAL_TYPE_UNKNOWN",
    entryType: "user",
    hint: 'the path of type "user" is /api/entries/users',
  });
  t.match(
    (await get("/api/entries/hats")).json().hint,
    /\/api\/entries\/users, \/api\/entries\/groups/,
  );
});
