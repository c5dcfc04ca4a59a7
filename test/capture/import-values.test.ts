import t from "tap";
import { importEntries } from "../../src/capture/index.ts";
import { captureFixture, peopleLdif } from "../support/capture.ts";

const PEOPLE = 40;
const MEMBERS = 3000;
const BOUND = 200;

/** One group of `MEMBERS` members (people who need not exist: slapd checks the syntax only). */
const groupLdif = `dn: cn=everyone,ou=groups,dc=example,dc=org
objectClass: groupOfNames
cn: everyone
${Array.from({ length: MEMBERS }, (_, i) => `member: uid=m${i},ou=people,dc=example,dc=org`).join("\n")}
`;

t.test(
  "an import cuts a page into writes of at most valuesPerWrite values, a huge group written alone",
  async (t) => {
    const f = await captureFixture(t, { seedLdif: `${peopleLdif(PEOPLE)}\n${groupLdif}` });
    // One page holds every entry: what cuts it is the values it holds, not its entries.
    const result = await importEntries(f.context, {
      reason: "import",
      pageSize: 1000,
      valuesPerWrite: BOUND,
    });
    const { rows } = await f.db.pool.query<{ dn: string; members: number | null }>(
      `SELECT data->'state'->>'dn' AS dn,
              jsonb_array_length(data->'state'->'attributes'->'member') AS members
         FROM events WHERE type = 'EntrySnapshot'`,
    );
    t.equal(result.recorded, rows.length, "every entry recorded");
    t.ok(rows.length >= PEOPLE + 1, "the people and the group");
    const group = rows.find((row) => row.dn.startsWith("cn=everyone,"));
    t.equal(group?.members, MEMBERS, "the group's snapshot holds every member");

    const writes = result.writes;
    t.ok(writes.length > 2, `the page is cut into several writes (${writes.length})`);
    const over = writes.filter((values) => values > BOUND);
    t.equal(over.length, 1, "one write holds more than the bound: the group's");
    t.ok(over[0]! >= MEMBERS && over[0]! < MEMBERS + 20, "and it holds the group alone");
    t.ok(
      writes.reduce((sum, values) => sum + values, 0) >= MEMBERS + PEOPLE * 4,
      "the writes hold every value between them",
    );
  },
);

t.test("an import's writes default to a bound that leaves a page of people whole", async (t) => {
  const f = await captureFixture(t, { seedLdif: peopleLdif(PEOPLE) });
  const result = await importEntries(f.context, { reason: "import", pageSize: 1000 });
  t.equal(result.writes.length, 1, "one page, one write");
});
