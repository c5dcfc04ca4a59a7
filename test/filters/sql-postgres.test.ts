import t from "tap";
import {
  caseInsensitiveAttributes,
  checkAttributes,
  compileFilterToSql,
  parseFilter,
} from "../../src/filters/index.ts";
import { testDatabase } from "../support/postgres.ts";

/** Compiled filters against real PostgreSQL. */

const ENTRIES: Record<string, Record<string, string[]>> = {
  ann: {
    cn: ["Ann Smith"],
    sn: ["Smith"],
    mail: ["ann@example.com", "A.Smith@Example.org"],
    employeeNumber: ["0042"],
    description: ["100% sure_thing\\ok"],
  },
  bob: {
    cn: ["Bob Jones"],
    sn: ["Jones"],
    mail: ["bob@example.com"],
    employeeNumber: ["0007"],
    description: ["100 percent"],
  },
  cat: { cn: ["Çat O'Neil"], sn: ["O'Neil"], title: ["Boss"], description: ["(x)*"] },
};
const known = caseInsensitiveAttributes([
  "cn",
  "sn",
  "mail",
  "employeeNumber",
  "description",
  "title",
]);

t.test("compiled filters select the right rows", async (t) => {
  const { pool } = await testDatabase(t, { migrated: false });
  await pool.query("CREATE TABLE entries (id text PRIMARY KEY, attributes jsonb NOT NULL)");
  for (const [id, attributes] of Object.entries(ENTRIES)) {
    await pool.query("INSERT INTO entries VALUES ($1, $2)", [id, JSON.stringify(attributes)]);
  }
  const select = async (filter: string): Promise<string[]> => {
    const { ast, unknown } = checkAttributes(parseFilter(filter).ast, known);
    void unknown;
    const params: unknown[] = ["%"];
    const where = compileFilterToSql(ast, { attributesColumn: "e.attributes", params });
    const { rows } = await pool.query<{ id: string }>(
      `SELECT id FROM entries AS e WHERE e.id LIKE $1 AND ${where} ORDER BY id`,
      params,
    );
    return rows.map((row) => row.id);
  };
  const cases: [string, string[]][] = [
    ["sn = smith", ["ann"]],
    ["(sn=SMITH)", ["ann"]],
    ['cn eq "çat o\'neil"', ["cat"]],
    ['cn ~= "ANN SMITH"', ["ann"]],
    ["(mail=*@example.com)", ["ann", "bob"]],
    ["(mail=a.smith@EXAMPLE.ORG)", ["ann"]],
    ["mail = *EXAMPLE*", ["ann", "bob"]],
    ["mail != *", ["cat"]],
    ['{"title": null}', ["ann", "bob"]],
    ['{"sn": ["jones", "o\'neil"]}', ["bob", "cat"]],
    ["employeeNumber >= 0010", ["ann"]],
    ['employeeNumber < "0042"', ["bob"]],
    ['employeeNumber gt "0007"', ["ann"]],
    ['employeeNumber le "0007"', ["bob"]],
    ['description = "100% *"', ["ann"]],
    ['description = "100_*"', []],
    ["description = *_thing*", ["ann"]],
    ['description = "*\\\\ok"', ["ann"]],
    ["(description=\\28x\\29\\2a)", ["cat"]],
    ['description = "(x)\\*"', ["cat"]],
    ['description co "%"', ["ann"]],
    ['cn sw "b" or cn ew "NEIL"', ["bob", "cat"]],
    ["(&)", ["ann", "bob", "cat"]],
    ["(|)", []],
    ["(&(sn=*)(!(|(sn=smith)(sn=jones))))", ["cat"]],
    ["shoeSize = 9 OR sn = jones", ["bob"]],
    ["shoeSize != 9", ["ann", "bob", "cat"]],
    ["SN = Jones", ["bob"]],
    [`cn = "'; DROP TABLE entries; --"`, []],
    [`{"x'); DROP TABLE entries; --": "1"}`, []],
  ];
  for (const [filter, ids] of cases) t.same(await select(filter), ids, filter);
  const { rows } = await pool.query("SELECT count(*)::int AS n FROM entries");
  t.equal(rows[0].n, 3, "the table is still there");
});
