import pino from "pino";
import { chainBatch, startChainer } from "../src/audit/index.ts";
import { EventStore } from "../src/store/index.ts";
import { benchDatabase, benchSize, fmt, machine, recordResults, time } from "./support.ts";

/** Appends per side; `--size 500` for 500. */
const APPENDS = benchSize(4_000);
const TURNS = 10;

/**
 * Appends (one event per transaction) with the chainer running against appends without it,
 * in alternating turns on one database, so that the machine's speed moves both alike; then
 * how fast the chainer catches up with a log it has not seen.
 */
export async function chainBenchmark(): Promise<void> {
  const db = await benchDatabase();
  try {
    const store = await EventStore.open(db.pool);
    const log = pino({ level: "silent" });
    const append = (i: number) =>
      store.appendToStream(`s-${i % 100}`, [{ type: "Tick", data: { i, at: "x".repeat(200) } }]);
    const seconds = [0, 0];
    for (let turn = 0; turn < TURNS; turn++) {
      const from = Math.floor((APPENDS * turn) / TURNS);
      const to = Math.floor((APPENDS * (turn + 1)) / TURNS);
      seconds[0]! += await time(async () => {
        for (let i = from; i < to; i++) await append(i);
      });
      const chainer = startChainer({ pool: db.pool, log, interval: 50 });
      seconds[1]! += await time(async () => {
        for (let i = from; i < to; i++) await append(APPENDS + i);
      });
      await chainer.stop();
    }
    while ((await chainBatch(db.pool, 1000)) > 0);
    for (let i = 0; i < APPENDS; i++) await append(2 * APPENDS + i);
    const catchUp = await time(async () => {
      while ((await chainBatch(db.pool, 1000)) > 0);
    });
    const [without, withChainer] = seconds.map((s) => APPENDS / s!) as [number, number];
    recordResults(
      "chain",
      `## Hash chain

Command: \`npm run bench -- chain --size ${APPENDS}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

| operation | events/s | baseline events/s | ratio |
| --- | ---: | ---: | ---: |
| append, 1 event per transaction, chainer running | ${fmt(withChainer)} | ${fmt(without)} (the same appends, no chainer) | ${fmt(withChainer / without, 2)} |
| chainer catching up (batches of 1,000) | ${fmt(APPENDS / catchUp)} | | |
`,
    );
  } finally {
    await db.close();
  }
}
