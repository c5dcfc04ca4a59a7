import t from "tap";
import { Projector, waitForProjection } from "../../src/projector/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { testDatabase } from "../support/postgres.ts";
import { compareWithReplay } from "../support/projection-replay.ts";
import { tallyProjection } from "../support/tally-projection.ts";

const quiet = { info() {}, warn() {}, error() {} };

t.test(
  "a live projection equals its replay into a scratch schema, at the live checkpoint",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    const projection = tallyProjection();
    const projector = await Projector.start({ pool, projections: [projection], log: quiet });
    t.teardown(() => projector.stop());
    let last;
    for (let n = 0; n < 30; n++) {
      ({
        events: [last],
      } = await store.appendToStream(`s-${n % 4}`, [{ type: "Tick", data: { n } }]));
    }
    await waitForProjection(pool, "tally", last!);
    const same = await compareWithReplay(pool, projection);
    t.same(same.differences, [], "no table differs");
    t.equal(same.events, 30, "the replay applied the whole log");
    t.equal(same.tables, 2, "the projection's table and _streams were compared");

    // Events the live tables have not applied yet are not replayed either: the replay stops at
    // the live checkpoint, so a projector behind the log is compared with the log it has read.
    await projector.stop();
    await store.appendToStream("s-0", [{ type: "Tick", data: { n: 30 } }]);
    const behind = await compareWithReplay(pool, projection);
    t.same(behind.differences, [], "still equal: the replay stopped where the live tables are");
    t.equal(behind.events, 30);

    // A live row the log does not imply is reported, with the rows that differ.
    await pool.query("UPDATE projection_tally.streams SET ticks = 99 WHERE stream_id = 's-1'");
    const tampered = await compareWithReplay(pool, projection);
    t.match(tampered.differences, [
      {
        table: "streams",
        liveRows: 4,
        replayedRows: 4,
        onlyLive: [{ stream_id: "s-1", ticks: 99 }],
        onlyReplayed: [{ stream_id: "s-1", ticks: 8 }],
      },
    ]);
    const { rows } = await pool.query(
      "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'replay_check_%'",
    );
    t.same(rows, [], "the scratch schema is dropped");
  },
);
