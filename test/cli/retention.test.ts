import t from "tap";
import { chainBatch } from "../../src/audit/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { EntryHistory } from "../support/entries.ts";
import { testDatabase } from "../support/postgres.ts";
import { addPeople, PEOPLE } from "../rest/fixtures/harness.ts";
import { configDir, runAnnal } from "./support.ts";

t.setTimeout(300_000);

const day = (n: number) => new Date(Date.UTC(2026, 10, n, 9));

t.test(
  "annal retention run folds the old log, annal erase redacts, log verify holds",
  async (t) => {
    const { url, pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    const history = await EntryHistory.start(t, pool, store);
    const ids = await addPeople(history, day(1));
    await history.modify(ids.alice!, { title: ["Manager"] }, { at: day(2) });
    await history.delete(ids.bob!, { at: day(3) });
    await history.settled();
    while ((await chainBatch(pool, 100)) > 0);
    const env = { env: { DATABASE_URL: url } };

    const none = await configDir(t, "");
    const unset = await runAnnal(["retention", "run", "--config", none.file], env);
    t.equal(unset.code, 1);
    t.match(unset.stderr, /^annal: ANNAL_RETENTION_NOT_CONFIGURED: /);

    // The history is of early November 2026: a day's keep puts it all before the horizon, but
    // the chain's head (bob's delete) is always kept.
    const { file } = await configDir(t, '[retention]\nkeep = "1d"\n');
    const dry = await runAnnal(["retention", "run", "--dry-run", "--config", file], env);
    t.equal(dry.code, 0, dry.stderr);
    t.match(dry.stdout, /^would fold 5 streams at the horizon .*, removing 6 events\n/);
    const run = await runAnnal(["retention", "run", "--config", file], env);
    t.equal(run.code, 0, run.stderr);
    t.match(
      run.stdout,
      /^folded 5 streams at the horizon .*, removed 6 events\nthe kept chain starts at event \d+/,
    );

    const erase = await runAnnal(
      ["erase", `uid=bob,${PEOPLE}`, "--reason", "order 2026-117", "--config", file],
      env,
    );
    t.equal(erase.code, 0, erase.stderr);
    t.match(
      erase.stdout,
      new RegExp(`^erased .*mail.* of entry ${ids.bob} in 2 events; recorded as event \\d+\\n$`),
    );
    const noReason = await runAnnal(["erase", ids.bob!, "--config", file], env);
    t.equal(noReason.code, 1);
    t.match(noReason.stderr, /^annal: ANNAL_ERASURE_REASON_MISSING: /);

    while ((await chainBatch(pool, 100)) > 0);
    const verify = await runAnnal(["log", "verify", "--config", file], env);
    t.equal(verify.code, 0, verify.stderr);
    t.match(verify.stdout, /^the chain holds: /);
  },
);
