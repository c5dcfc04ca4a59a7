import t from "tap";
import { addPeople, GROUPS, PEOPLE, restHarness } from "./fixtures/harness.ts";

t.setTimeout(300_000);

const q = encodeURIComponent;
const day = (n: number) => new Date(Date.UTC(2026, 10, n, 9));
/** The moment asked about: after the people were added (day 1), before anything changed. */
const T = new Date(Date.UTC(2026, 10, 5, 12)).toISOString();

/** Searches of every kind: the four dialects, sorts, fields, and a filter on operational values. */
const SEARCHES = [
  `filter=${q('{"title": "engineer"}')}&sort=sn,-givenName`,
  `filter=${q("(&(title=Engineer)(sn=meyer))")}`,
  `filter=${q("title = Engineer OR uidNumber >= 1004")}&sort=-uidNumber`,
  `filter=${q('title eq "Engineer" and not (sn eq "Zeller")')}&sort=-dn`,
  `filter=${q("(cn=*e*)")}&fields=${q("uid,mail,+")}&sort=mail`,
  `filter=${q("(!(mail=*))")}`,
  `filter=${q("(creatorsName=cn=admin,dc=example,dc=org)")}&fields=uid`,
  `sort=givenName&include=nodes,count`,
  "",
];

/** A response without its cursors (a cursor at a moment carries the moment, so it differs). */
function withoutCursors(body: Record<string, unknown>): Record<string, unknown> {
  const { pageInfo, ...rest } = body as { pageInfo?: Record<string, unknown> };
  if (!pageInfo) return rest;
  const { startCursor: _s, endCursor: _e, ...flags } = pageInfo;
  return { ...rest, pageInfo: flags };
}

t.test("a search at a moment answers what the same search answered then", async (t) => {
  const { get, history } = await restHarness(t);
  const ids = await addPeople(history, day(1));
  await history.settled();
  const recorded = new Map<string, unknown>();
  for (const search of SEARCHES) {
    const response = await get(`/api/entries/users?${search}`);
    t.equal(response.statusCode, 200, response.body);
    recorded.set(search, withoutCursors(response.json()));
  }
  // The directory changes after T: every kind of change, some of them twice.
  await history.modify(ids.alice!, { title: ["Manager"], mail: [] }, { at: day(10) });
  await history.modify(ids.erin!, { sn: ["Aaron"] }, { at: day(11) });
  await history.delete(ids.bob!, { at: day(12) });
  await history.rename(ids.carol!, `uid=carol2,${PEOPLE}`, { at: day(13) });
  await history.add(
    {
      dn: `uid=frank,${PEOPLE}`,
      type: "user",
      attributes: {
        objectClass: ["inetOrgPerson"],
        uid: ["frank"],
        cn: ["Frank"],
        sn: ["Meyer"],
        title: ["Engineer"],
      },
    },
    { at: day(14) },
  );
  await history.modify(ids.alice!, { title: ["Engineer"] }, { at: day(15) });
  await history.settled();
  for (const search of SEARCHES) {
    const now = withoutCursors((await get(`/api/entries/users?${search}`)).json());
    const response = await get(`/api/entries/users?${search}${search ? "&" : ""}at=${q(T)}`);
    t.equal(response.statusCode, 200, response.body);
    t.same(withoutCursors(response.json()), recorded.get(search), `at T: ${search || "(all)"}`);
    t.notSame(now, recorded.get(search), `and now differs: ${search || "(all)"}`);
  }
  const before = await get(
    `/api/entries/users?at=${q("2026-10-01T00:00:00Z")}&include=nodes,count`,
  );
  t.same(before.json(), { nodes: [], count: 0 }, "before anyone was added: nobody");
});

t.test("keyset pages at a moment walk the past's order and keep their moment", async (t) => {
  let now = day(6);
  const { get, history } = await restHarness(t, { now: () => now });
  const ids = await addPeople(history, day(1));
  await history.settled();
  const walk = async (query: string) => {
    const seen: string[] = [];
    let url = `/api/entries/users?${query}&first=2`;
    for (;;) {
      const body = (await get(url)).json();
      seen.push(...body.nodes.map((node: { dn: string }) => node.dn));
      if (!body.pageInfo.hasNextPage) return seen;
      url = `/api/entries/users?${query}&first=2&after=${q(body.pageInfo.endCursor)}`;
    }
  };
  const then = await walk("sort=-sn");
  // `at=now-1d` is day 5 for the first page; the later pages read on at day 5, not at the
  // new now, although the clock moved on and the directory changed in between.
  const relative = `sort=-sn&at=${q("now-1d")}`;
  const first = (await get(`/api/entries/users?${relative}&first=2`)).json();
  await history.modify(ids.dave!, { sn: ["Zz"] }, { at: day(7) });
  await history.delete(ids.erin!, { at: day(7) });
  await history.settled();
  now = day(20);
  const seen = first.nodes.map((node: { dn: string }) => node.dn);
  let cursor = first.pageInfo.endCursor;
  for (;;) {
    const body = (await get(`/api/entries/users?${relative}&first=2&after=${q(cursor)}`)).json();
    seen.push(...body.nodes.map((node: { dn: string }) => node.dn));
    if (!body.pageInfo.hasNextPage) break;
    cursor = body.pageInfo.endCursor;
  }
  t.same(seen, then, "the pages at now-1d are the directory of day 5");
  const back = (await get(`/api/entries/users?${relative}&last=2&before=${q(cursor)}`)).json();
  t.equal(back.nodes.length, 2, "backward from the last page");
  t.ok(back.pageInfo.hasPreviousPage);
  const other = await get(`/api/entries/users?sort=-sn&at=${q(T)}&after=${q(cursor)}`);
  t.match(other.json(), { code: "ANNAL_CURSOR_MISMATCH" }, "a cursor of another at");
});

t.test("an export at a moment holds the directory as it was then", async (t) => {
  const { get, history } = await restHarness(t);
  const ids = await addPeople(history, day(1));
  await history.add(
    {
      dn: `cn=engineers,${GROUPS}`,
      type: "group",
      attributes: {
        objectClass: ["groupOfNames"],
        cn: ["engineers"],
        member: [`uid=alice,${PEOPLE}`],
      },
    },
    { at: day(2) },
  );
  await history.settled();
  const formats = ["people.csv", "people.json", "people.ldif", "people.ndjson"];
  const exportOf = (filename: string, at = "") =>
    get(`/api/entries/users?fields=${q("uid,sn,mail")}&sort=uid&filename=${filename}${at}`);
  const then = new Map<string, string>();
  for (const filename of formats) then.set(filename, (await exportOf(filename)).body);
  await history.modify(ids.alice!, { mail: ["new@example.org"] }, { at: day(10) });
  await history.delete(ids.dave!, { at: day(11) });
  await history.settled();
  for (const filename of formats) {
    const response = await exportOf(filename, `&at=${q(T)}`);
    t.equal(response.statusCode, 200, response.body);
    t.equal(response.body, then.get(filename), `${filename} at T`);
    t.not((await exportOf(filename)).body, then.get(filename), `${filename} now differs`);
  }
});

t.test("at and during refuse what they cannot mean, with stable codes", async (t) => {
  const { get, history } = await restHarness(t);
  await addPeople(history, day(1));
  await history.settled();
  const cases: [string, Record<string, unknown>][] = [
    [`at=${q("Sunday")}`, { code: "ANNAL_PARAMETER_INVALID", parameter: "at" }],
    [
      `at=${q(T)}&during=${q("2026-11-01/2026-11-02")}`,
      { code: "ANNAL_PARAMETER_CONFLICT", parameters: ["at", "during"] },
    ],
    [`during=${q("2026-11-01")}`, { code: "ANNAL_INTERVAL_INVALID", parameter: "during" }],
    [`during=${q("2026-11-01/soon")}`, { code: "ANNAL_INTERVAL_INVALID", parameter: "during" }],
    [`during=${q("P1D/P2D")}`, { code: "ANNAL_INTERVAL_INVALID" }],
    [`during=${q("2026-11-01/")}`, { code: "ANNAL_INTERVAL_INVALID", hint: /\.\./ }],
    [
      `during=${q("2026-11-05/2026-11-01")}`,
      {
        code: "ANNAL_INTERVAL_REVERSED",
        start: "2026-11-05T00:00:00.000Z",
        end: "2026-11-01T00:00:00.000Z",
      },
    ],
    [`during=${q("2026-11-05/2026-11-05")}`, { code: "ANNAL_INTERVAL_REVERSED" }],
    [
      `during=${q("2026-11-01/..")}&sort=sn`,
      { code: "ANNAL_PARAMETER_CONFLICT", parameters: ["during", "sort"] },
    ],
    [
      `during=${q("2026-11-01/..")}&filename=x.csv&fields=uid`,
      { code: "ANNAL_PARAMETER_CONFLICT" },
    ],
  ];
  for (const [query, problem] of cases) {
    for (const prefer of ["handling=lenient", "handling=strict"]) {
      const response = await get(`/api/entries/users?${query}`, { prefer });
      t.equal(response.statusCode, 400, `${query} (${prefer})`);
      t.match(response.json(), problem, query);
    }
  }
  const changes = await get(`/api/changes?since=${q(T)}&during=${q("2026-11-01/..")}`);
  t.match(changes.json(), { code: "ANNAL_PARAMETER_CONFLICT", parameters: ["during", "since"] });
});
