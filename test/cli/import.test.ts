import path from "node:path";
import t from "tap";
import { appConfig } from "../support/app-config.ts";
import { peopleLdif } from "../support/capture.ts";
import { startSlapd } from "../support/slapd.ts";
import { testDatabase } from "../support/postgres.ts";
import { runAnnal } from "./support.ts";

const PEOPLE = 30;
const ldif = peopleLdif(PEOPLE);

t.test("annal import records a snapshot of every entry, and again when run again", async (t) => {
  const slapd = await startSlapd({ seedLdif: ldif });
  t.teardown(() => slapd.stop());
  const db = await testDatabase(t);
  // The configuration `annal start` would read; `annal import` reads it too.
  await appConfig(t, { db, slapd, captureInterval: "1s" });
  const file = path.join(t.testdirName, "annal.toml");
  const snapshotsPerEntry = async () =>
    (
      await db.pool.query<{ n: number; entries: number }>(
        `SELECT n, count(*)::int AS entries
           FROM (SELECT stream_id, count(*)::int AS n FROM events
                  WHERE type = 'EntrySnapshot' GROUP BY stream_id) AS s
          GROUP BY n`,
      )
    ).rows;
  const entries = PEOPLE + 4; // the base, its three ous

  for (const [round, expected] of [
    ["the first import", [{ n: 1, entries }]],
    ["the second", [{ n: 2, entries }]],
  ] as const) {
    const run = await runAnnal(["import", "--config", file], {
      env: { LDAP_PASSWORD: slapd.password },
    });
    t.equal(run.code, 0, run.stderr);
    t.match(run.stdout, new RegExp(`^imported ${entries} entries in [\\d.]+ s\\n$`), round);
    t.same(await snapshotsPerEntry(), expected, `${round}: a snapshot of each entry`);
  }
});
