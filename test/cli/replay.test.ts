import t from "tap";
import { schemaNames } from "../../src/projector/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { testDatabase } from "../support/postgres.ts";
import { configDir, runAnnal } from "./support.ts";

t.test("annal replay rebuilds a projection from the log and swaps it in", async (t) => {
  const { url, pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  await store.appendToStream("replay-check", [
    { type: "ReplayTestNoise", data: { n: 1 } },
    { type: "ReplayTestNoise", data: { n: 2 } },
  ]);
  const { file } = await configDir(t, "");
  const run = await runAnnal(["replay", "entries", "--config", file], {
    env: { DATABASE_URL: url },
  });
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /^replayed entries \(version \d+\): 2 events in [\d.]+ s\n$/);
  const live = await pool.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [
    schemaNames("entries").live,
  ]);
  t.equal(live.rowCount, 1, "the rebuilt schema is live");
});

t.test("an unknown projection is refused with the list of known ones", async (t) => {
  const run = await runAnnal(["replay", "nope"]);
  t.equal(run.code, 1);
  t.match(
    run.stderr,
    /^annal: ANNAL_UNKNOWN_PROJECTION: there is no projection named "nope"\nannal: hint: the projections are: .*entries/,
  );
});
