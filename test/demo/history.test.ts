import t from "tap";
import { sampleLdif, seedDemoHistory } from "../../src/demo/index.ts";
import { entryAt } from "../../src/history/index.ts";
import { logOrder } from "../../src/store/index.ts";
import { captureFixture } from "../support/capture.ts";

t.setTimeout(240_000);

const DAY = 24 * 3600 * 1000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY);

// The demo's first start with its past (`[directory.demo] history`): the story is written
// before the import, and ends exactly in the directory as it is.
const fixture = await captureFixture(t, { seedLdif: sampleLdif() });
const context = { ...fixture.context, beforeFirstImport: seedDemoHistory };
await fixture.startProjector();
const { captureOnce } = await import("../../src/capture/index.ts");
await captureOnce(context, "accesslog");
const { waitForProjection } = await import("../../src/projector/index.ts");
const { allProjections } = await import("../../projections/index.ts");
const head = await fixture.store.head();
for (const projection of allProjections) {
  await waitForProjection(fixture.db.pool, projection.name, head, 60_000);
}
const pool = fixture.db.pool;

const uuidOf = async (uidOrCn: string) =>
  (
    await pool.query<{ uuid: string }>(
      `SELECT data->>'entryUUID' AS uuid FROM events
        WHERE data->'after'->'attributes'->'uid' ? $1 OR data->'after'->'attributes'->'cn' ? $1
           OR data->'state'->'attributes'->'uid' ? $1
        LIMIT 1`,
      [uidOrCn],
    )
  ).rows[0]?.uuid;

t.test("every seeded event is marked demo data and lies in the last 90 days", async (t) => {
  const { rows } = await pool.query<{ type: string; n: number; first: Date; last: Date }>(
    `SELECT type, count(*)::int AS n, min(occurred_at) AS first, max(occurred_at) AS last
       FROM events WHERE metadata->>'source' = 'demo-history' AND metadata->>'demo' = 'true'
      GROUP BY type ORDER BY type`,
  );
  const byType = Object.fromEntries(rows.map((row) => [row.type, row]));
  t.ok(byType.EntryAdded!.n > 300, "the directory as it was, and the hires");
  t.ok(byType.EntryModified!.n >= 5 + 6 + 3 * 2 + 1, "titles, joiners' groups, moves, leaver");
  t.equal(byType.EntryDeleted!.n, 1, "one leaver");
  t.ok(byType.EntryAdded!.first.getTime() >= daysAgo(91).getTime());
  t.ok(byType.EntryModified!.last.getTime() <= Date.now());
  // The story ends where the directory is: each entry's last seeded state holds the values
  // the import's snapshot found (in the directory's own order or not).
  const ends = await pool.query<{
    seeded: Record<string, string[]> | null;
    found: Record<string, string[]>;
  }>(
    `SELECT l.attributes AS seeded, s.data->'state'->'attributes' AS found
       FROM events s
       LEFT JOIN LATERAL (
         SELECT data->'after'->'attributes' AS attributes FROM events l
          WHERE l.stream_id = s.stream_id AND l.metadata->>'source' = 'demo-history'
          ORDER BY l.stream_version DESC LIMIT 1) l ON true
      WHERE s.type = 'EntrySnapshot'`,
  );
  const sorted = (attributes: Record<string, string[]> | null) =>
    attributes &&
    Object.fromEntries(
      Object.entries(attributes)
        .map(([name, values]) => [name, [...values].sort()])
        .sort(([a], [b]) => String(a).localeCompare(String(b))),
    );
  t.ok(ends.rowCount! > 300);
  t.same(
    ends.rows.filter(
      (row) => JSON.stringify(sorted(row.seeded)) !== JSON.stringify(sorted(row.found)),
    ),
    [],
    "every entry's seeded past ends in its state today",
  );
});

t.test("the seeded past is appended in the order of its moments", async (t) => {
  const { rows } = await pool.query<{ occurred_at: Date }>(
    `SELECT occurred_at FROM events WHERE metadata->>'source' = 'demo-history'
      ORDER BY ${logOrder("events")}`,
  );
  const times = rows.map((row) => row.occurred_at.getTime());
  t.same(
    times,
    [...times].sort((a, b) => a - b),
  );
});

t.test("at a past moment: a person there a month ago, a title before its change", async (t) => {
  const promoted = (
    await pool.query<{ uuid: string; title: string; at: Date }>(
      `SELECT data->>'entryUUID' AS uuid, data->'after'->'attributes'->'title'->>0 AS title,
              occurred_at AS at
         FROM events WHERE metadata->>'story' LIKE '% became %' LIMIT 1`,
    )
  ).rows[0]!;
  t.match(promoted.title, /^Senior /);
  const before = await entryAt(pool, promoted.uuid, new Date(promoted.at.getTime() - 1000));
  t.ok(before.found);
  if (before.found) t.same(before.entry.attributes.title, [promoted.title.replace(/^Senior /, "")]);
  const yesterday = await entryAt(pool, (await uuidOf("prossi"))!, daysAgo(1));
  t.ok(yesterday.found, "at=yesterday finds an entry on the first start");
});

t.test("a hire did not exist before their first day; the leaver is gone since hers", async (t) => {
  const hire = (
    await pool.query<{ uuid: string; at: Date }>(
      `SELECT data->>'entryUUID' AS uuid, occurred_at AS at FROM events
        WHERE type = 'EntryAdded' AND metadata->>'story' LIKE '% joined' LIMIT 1`,
    )
  ).rows[0]!;
  t.match(await entryAt(pool, hire.uuid, new Date(hire.at.getTime() - DAY)), {
    found: false,
    reason: "not-yet",
  });
  const leaver = (await uuidOf("mhartmann"))!;
  t.match(await entryAt(pool, leaver, daysAgo(30)), { found: true });
  t.match(await entryAt(pool, leaver, new Date()), { found: false, reason: "deleted" });
  const group = await pool.query(
    `SELECT 1 FROM events WHERE type = 'EntryModified' AND metadata->>'story' = 'Maren Hartmann left'
        AND data->'patch' @> '[{"op": "remove"}]'`,
  );
  t.equal(group.rowCount, 1, "taken out of her group");
});

t.test("without the deployed access request, no request is made up", async (t) => {
  // The past requests are run by the engine (test/demo/seeded-simulation.test.ts), never
  // written by hand.
  const { rows } = await pool.query(
    `SELECT 1 FROM events WHERE metadata->>'story' LIKE 'access request:%' OR type = 'WorkflowStarted'`,
  );
  t.equal(rows.length, 0);
});
