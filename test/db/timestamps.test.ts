import fc from "fast-check";
import t from "tap";
import { parseTimestamptz } from "../../src/db/timestamps.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * Zones whose offsets PostgreSQL writes in each of its forms: whole hours, minutes, and (for
 * local mean times before standard time) seconds, on both sides of UTC.
 */
const ZONES = [
  "UTC",
  "America/New_York",
  "Asia/Kolkata", // +05:30
  "America/St_Johns", // -03:30, -02:30 in summer
  "Pacific/Chatham", // +12:45
  "Europe/Amsterdam", // +00:19:32 before 1937
  "Africa/Monrovia", // -00:44:30 before 1972
];

const FIRST = Date.UTC(1000, 0, 2);
const LAST = Date.UTC(9999, 11, 30);

t.test("any instant reads back as PostgreSQL writes it, in any zone", async (t) => {
  const db = await testDatabase(t, { migrated: false });
  const client = await db.pool.connect();
  t.teardown(() => client.release());
  const instants = fc.record({
    millis: fc.integer({ min: FIRST, max: LAST }),
    // Microseconds below the millisecond: PostgreSQL writes them, a Date drops them.
    micros: fc.integer({ min: 0, max: 999 }),
  });
  const forms = new Set<string>();
  for (const zone of ZONES) {
    await client.query(`SET TimeZone = '${zone}'`);
    const sample = fc.sample(instants, { numRuns: 400, seed: zone.length });
    // Near the zone's own history too: Amsterdam's and Monrovia's odd offsets ended in the
    // 20th century, which random instants over nine millennia rarely hit.
    for (let year = 1890; year < 2030; year += 7) {
      sample.push({
        millis: Date.UTC(year, year % 12, 1 + (year % 27), 13, 7, 5, year % 1000),
        micros: 1,
      });
    }
    // Given to PostgreSQL in UTC, to the microsecond, and written back in the zone.
    const given = sample.map(
      ({ millis, micros }) =>
        `${new Date(millis).toISOString().slice(0, -1)}${String(micros).padStart(3, "0")}Z`,
    );
    const { rows } = await client.query<{ text: string }>(
      "SELECT t::timestamptz::text AS text FROM unnest($1::text[]) AS s(t)",
      [given],
    );
    for (const { text } of rows)
      forms.add(
        text
          .slice(19)
          .replace(/^\.\d+/, "")
          .replace(/\d/g, "9"),
      );
    const wrong = rows
      .map((row, i) => ({
        text: row.text,
        want: sample[i]!.millis,
        got: parseTimestamptz(row.text),
      }))
      .filter(({ want, got }) => !(got instanceof Date) || got.getTime() !== want);
    t.same(wrong.slice(0, 3), [], `${zone}: every instant of ${rows.length}`);
  }
  t.same(
    [...forms].sort(),
    ["+99", "+99:99", "+99:99:99", "-99", "-99:99", "-99:99:99"],
    "offsets were written in hours, in minutes and in seconds, east and west",
  );
});

t.test("the forms outside the fast path read as pg's own parser reads them", async (t) => {
  const db = await testDatabase(t, { migrated: false });
  const { rows } = await db.pool
    .query<{ bc: Date; far: Date; early: Date; inf: number }>(
      `SET TimeZone = 'UTC';
     SELECT '0044-03-15 12:00:00+00 BC'::timestamptz AS bc,
            '12345-06-07 08:09:10+00'::timestamptz AS far,
            '0099-01-01 00:00:00.5+00'::timestamptz AS early,
            'infinity'::timestamptz AS inf`,
    )
    .then((results) => (Array.isArray(results) ? results[1] : results));
  const row = rows[0]!;
  t.equal(row.bc.getUTCFullYear(), -43, "44 BC is the year -43");
  t.equal(row.far.getTime(), Date.UTC(12345, 5, 7, 8, 9, 10));
  const early = new Date(Date.UTC(2000, 0, 1, 0, 0, 0, 500));
  early.setUTCFullYear(99);
  t.equal(row.early.getTime(), early.getTime(), "a year below 100 stays that year");
  t.equal(row.inf, Infinity);
});

t.test("offsets in minutes, west and east of UTC", async (t) => {
  const read = (text: string) => (parseTimestamptz(text) as Date).getTime();
  t.equal(read("2026-11-25 09:03:13.5-02"), Date.UTC(2026, 10, 25, 11, 3, 13, 500));
  t.equal(read("2026-11-25 09:03:13+05:30"), Date.UTC(2026, 10, 25, 3, 33, 13));
  t.equal(read("1920-05-01 12:00:00-00:44:30"), Date.UTC(1920, 4, 1, 12, 44, 30));
});
