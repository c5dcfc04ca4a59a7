import t from "tap";
import { captureFromAccesslog } from "../../src/capture/index.ts";
import { createDirectoryClient } from "../../src/directory/index.ts";
import { captureFixture, peopleLdif } from "../support/capture.ts";

const WRITERS = 8;
const WRITES_EACH = 150;

/**
 * slapd stamps `reqStart` when it receives a request and logs the write when it is done, so
 * with writers at once a write with an earlier `reqStart` often becomes visible after a later
 * one (about one write in twenty here). A pass that took its place from `reqStart` skipped
 * those for good; capture's place is `reqEnd`, which slapd gives each write as it logs it,
 * one at a time.
 */
t.test("writes made at once by many clients are each recorded exactly once", async (t) => {
  const f = await captureFixture(t, { seedLdif: peopleLdif(WRITERS) });
  await f.sync();
  const clients = Array.from({ length: WRITERS }, () =>
    createDirectoryClient({ url: f.slapd.url, bindDN: f.slapd.bindDN, password: f.slapd.password }),
  );
  t.teardown(() => Promise.all(clients.map((c) => c.close())));

  let writing = true;
  const writers = Promise.all(
    clients.map(async (client, i) => {
      for (let n = 0; n < WRITES_EACH; n++) {
        await client.modify(`uid=p${i},ou=people,dc=example,dc=org`, [
          { operation: "replace", attribute: "description", values: `p${i}-${n}` },
        ]);
      }
    }),
  ).finally(() => (writing = false));
  // Passes one after another while the writers write, as a busy capture worker runs them.
  let passes = 0;
  while (writing) {
    await captureFromAccesslog(f.context);
    passes++;
  }
  await writers;
  await captureFromAccesslog(f.context);

  const { rows } = await f.db.pool.query<{ value: string; n: number }>(
    `SELECT data->'after'->'attributes'->'description'->>0 AS value, count(*)::int AS n
       FROM events WHERE type = 'EntryModified' GROUP BY 1`,
  );
  const recorded = new Map(rows.map((r) => [r.value, r.n]));
  const written = clients.flatMap((_, i) =>
    Array.from({ length: WRITES_EACH }, (_, n) => `p${i}-${n}`),
  );
  t.ok(passes > 1, `capture ran ${passes} passes during the writes`);
  t.same(
    written.filter((value) => recorded.get(value) !== 1),
    [],
    `each of the ${written.length} writes is one change in the log`,
  );
});
