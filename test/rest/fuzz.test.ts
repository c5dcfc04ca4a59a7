import fc from "fast-check";
import t, { type Test } from "tap";
import { escapeFilterValue } from "../../src/directory/index.ts";
import { PEOPLE, restHarness } from "./fixtures/harness.ts";

t.setTimeout(600_000);

/** Characters and words that mean something in one of the four filter languages. */
const TRICKY = [
  ...'"\\*()[]{}:,=!<>~&|% \t\n',
  "or",
  "OR",
  "and",
  "AND",
  "not",
  "NOT",
  "eq",
  "pr",
  "sw",
  "\\2a",
  "\\\\",
  '\\"',
  "$and",
  "$or",
  "null",
  "true",
  "é",
  "😀",
  "cn",
  "uid",
];
const tricky = fc.string({ unit: fc.constantFrom(...TRICKY), maxLength: 16 });
const anyText = fc.oneof(
  tricky,
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ maxLength: 40 }),
);

/** The cn values of the entries: each a way to break a filter that splices text. */
const NAMES = [
  "a*b",
  "x)(uid=*",
  '"quoted"',
  "back\\slash",
  "OR",
  "Ann",
  "ann",
  "  spaced  ",
  "100%_done",
  "é😀",
];

async function setUp(t: Test) {
  const harness = await restHarness(t);
  for (const [index, cn] of NAMES.entries()) {
    await harness.history.add({
      dn: `uid=u${index},${PEOPLE}`,
      type: "user",
      attributes: { objectClass: ["inetOrgPerson"], uid: [`u${index}`], cn: [cn], sn: ["S"] },
    });
  }
  await harness.history.settled();
  return harness;
}

/** A response to anything: a success, or a problem with a stable code; never a 500. */
function wellFormed(response: {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}) {
  if (response.statusCode >= 500) return false;
  if (response.statusCode < 400) return true;
  const type = String(response.headers["content-type"]);
  if (!type.startsWith("application/problem+json")) return false;
  const problem = JSON.parse(response.body) as { code?: string; status?: number; detail?: string };
  return (
    /^ANNAL_[A-Z_]+$/.test(problem.code ?? "") &&
    problem.status === response.statusCode &&
    !!problem.detail
  );
}

const q = encodeURIComponent;

t.test("no filter, in any language or none, gets a 500", async (t) => {
  const { get } = await setUp(t);
  const shaped = fc.oneof(
    anyText,
    anyText.map((v) => `{"cn": ${JSON.stringify(v)}}`),
    anyText.map((v) => `(cn=${v})`),
    anyText.map((v) => `(&(cn=${v})(|(sn=*)(!(uid=${v}))))`),
    anyText.map((v) => `cn = ${v} AND sn = "${v}"`),
    anyText.map((v) => `cn eq "${v}" or (sn pr and not (uid sw ${v}))`),
    fc.tuple(anyText, anyText).map(([a, b]) => `${a}${b}`),
  );
  await fc.assert(
    fc.asyncProperty(shaped, fc.boolean(), async (filter, strict) => {
      const response = await get(
        `/api/entries/users?filter=${q(filter)}`,
        strict ? { prefer: "handling=strict" } : {},
      );
      return wellFormed(response);
    }),
    { numRuns: 400 },
  );
});

t.test("a filter value never changes the filter's structure, in any language", async (t) => {
  const { get } = await setUp(t);
  const expressionString = (v: string) => `"${v.replace(/["\\*]/g, (c) => `\\${c}`)}"`;
  const languages: Record<string, (v: string) => string> = {
    json: (v) => JSON.stringify({ cn: v }),
    ldap: (v) => `(cn=${escapeFilterValue(v)})`,
    expression: (v) => `cn = ${expressionString(v)}`,
    scim: (v) => `cn eq ${JSON.stringify(v)}`,
  };
  const value = fc.oneof(
    fc.constantFrom(...NAMES, "ANN", "a", "*", "x)(uid=*"),
    tricky,
    fc.string({ maxLength: 20 }),
  );
  await fc.assert(
    fc.asyncProperty(value, fc.constantFrom(...Object.keys(languages)), async (v, language) => {
      const filter = languages[language]!(v);
      const response = await get(`/api/entries/users?filter=${q(filter)}&fields=cn`);
      if (response.statusCode !== 200) return false;
      const found = (response.json().nodes as { cn: string[] }[]).map((node) => node.cn[0]).sort();
      const expected = NAMES.filter((name) => name.toLowerCase() === v.toLowerCase()).sort();
      return JSON.stringify(found) === JSON.stringify(expected);
    }),
    { numRuns: 300 },
  );
});

t.test(
  "no cursor, whether garbage or a valid one altered, gets a 500 or another page",
  async (t) => {
    const { get } = await setUp(t);
    const page = (await get("/api/entries/users?sort=cn&first=2")).json();
    const changes = (await get("/api/changes?first=2")).json();
    const valid = [page.pageInfo.endCursor as string, changes.pageInfo.endCursor as string];
    const altered = fc
      .tuple(fc.constantFrom(...valid), fc.nat(), fc.constantFrom(..."AZaz09-_."))
      .map(([cursor, at, char]) => {
        const index = at % cursor.length;
        return cursor.slice(0, index) + char + cursor.slice(index + 1);
      })
      .filter((cursor) => !valid.includes(cursor));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(altered, anyText, fc.base64String()),
        fc.constantFrom("after", "before"),
        fc.constantFrom("/api/entries/users?sort=cn&", "/api/changes?"),
        async (cursor, parameter, route) => {
          const response = await get(`${route}${parameter}=${q(cursor)}`);
          if (!wellFormed(response)) return false;
          // An altered cursor is never taken for another position.
          return cursor === "" || response.statusCode === 400;
        },
      ),
      { numRuns: 300 },
    );
  },
);

t.test("no since, range or at expression gets a 500", async (t) => {
  const { get } = await setUp(t);
  const words = [
    "now",
    "today",
    "yesterday",
    "this",
    "last",
    "week",
    "month",
    "year",
    "days",
    "ago",
    "-",
    "+",
    " ",
    "P",
    "T",
    "Z",
    "1",
    "99999999999",
    "h",
    "d",
    "w",
    "m",
    "s",
    ":",
    "2026-11-20",
    "T10:00",
    "+02:00",
    "M",
    "Y",
  ];
  const expression = fc.oneof(
    anyText,
    fc.string({ unit: fc.constantFrom(...words), maxLength: 8 }),
  );
  const { entryUUID } = (await get("/api/entries/users?first=1")).json().nodes[0];
  await fc.assert(
    fc.asyncProperty(
      expression,
      fc.constantFrom("since", "range", "at"),
      async (text, parameter) => {
        const url =
          parameter === "at"
            ? `/api/entries/users/${entryUUID}?at=${q(text)}`
            : `/api/changes?${parameter}=${q(text)}`;
        return wellFormed(await get(url));
      },
    ),
    { numRuns: 400 },
  );
});

t.test("no combination of query parameters, headers or path gets a 500", async (t) => {
  const { get } = await setUp(t);
  const names = [
    "filter",
    "fields",
    "sort",
    "first",
    "last",
    "limit",
    "after",
    "before",
    "include",
    "filename",
    "export",
    "at",
    "since",
    "range",
    "type",
    "affects",
    "x",
  ];
  const values = fc.oneof(
    anyText,
    fc.constantFrom(
      "1",
      "0",
      "-1",
      "1000000",
      "cn,sn",
      "*",
      "+",
      "1.1",
      "count",
      "nodes,patch",
      "a.csv",
      "b.ldif",
      '{"delimiter":";"}',
      "{}",
      "modify",
      "uid=u1,ou=people,dc=example,dc=org",
    ),
  );
  const query = fc.array(fc.tuple(fc.constantFrom(...names), values), { maxLength: 5 });
  const paths = fc.oneof(
    fc.constantFrom(
      "/api/entries/users",
      "/api/changes",
      "/api/entries/groups",
      "/api/entries/users/u",
      "/api",
    ),
    anyText.map((id) => `/api/entries/users/${q(id)}`),
    anyText.map((id) => `/api/entries/users/${q(id)}/changes`),
    anyText.map((segment) => `/api/entries/${q(segment)}`),
  );
  const headers = fc.record(
    {
      prefer: fc.oneof(fc.constantFrom("handling=strict", "handling=lenient"), anyText),
      "if-none-match": anyText,
      "if-modified-since": anyText,
      accept: fc.oneof(fc.constantFrom("text/html", "application/yaml", "*/*"), anyText),
    },
    { requiredKeys: [] },
  );
  await fc.assert(
    fc.asyncProperty(paths, query, headers, async (path, pairs, extra) => {
      const search = pairs.map(([name, value]) => `${name}=${q(value)}`).join("&");
      const clean = Object.fromEntries(
        Object.entries(extra).filter(([, value]) => /^[\t\x20-\x7e]*$/.test(value as string)),
      ) as Record<string, string>;
      return wellFormed(await get(`${path}?${search}`, clean));
    }),
    { numRuns: 400 },
  );
});
