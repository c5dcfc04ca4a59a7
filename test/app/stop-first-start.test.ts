import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { sampleLdif } from "../../src/demo/index.ts";
import { appConfig } from "../support/app-config.ts";
import { eventually } from "../support/eventually.ts";
import { armPausePoint } from "../support/pause-points.ts";
import { testDatabase } from "../support/postgres.ts";
import { startSlapd } from "../support/slapd.ts";

t.test(
  "stopping annal during its first start's import ends the import (rolled back, not run to its end), and the next start imports again",
  async (t) => {
    const slapd = await startSlapd({ seedLdif: sampleLdif() });
    t.teardown(() => slapd.stop());
    const db = await testDatabase(t);
    const config = await appConfig(t, { db, slapd, captureInterval: "1h" });
    const count = async (sql: string) => Number((await db.pool.query(sql)).rows[0].n);

    // The import stands after reading its first page, before writing it.
    const importing = armPausePoint(t, "capture.import.pageRead", { subject: "import" });
    const first = await startAnnal({ config, log: pino({ level: "silent" }) });
    await importing.reached();
    const stopped = first.stop();
    importing.release();
    await stopped;
    t.equal(
      await count("SELECT count(*) AS n FROM capture_checkpoints"),
      0,
      "the import did not run on to its end: no checkpoint",
    );
    t.equal(
      await count("SELECT count(*) AS n FROM events WHERE type = 'EntrySnapshot'"),
      0,
      "and left nothing behind",
    );

    const second = await startAnnal({ config, log: pino({ level: "silent" }) });
    t.teardown(() => second.stop());
    await eventually(
      async () => (await count("SELECT count(*) AS n FROM capture_checkpoints")) > 0,
      { what: "the next start's import" },
    );
    t.ok(
      (await count("SELECT count(*) AS n FROM events WHERE type = 'EntrySnapshot'")) > 100,
      "the next start imports the directory whole",
    );
  },
);
