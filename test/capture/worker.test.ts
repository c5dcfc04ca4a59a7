import t from "tap";
import {
  readCaptureStatus,
  retireCaptureQueue,
  startCaptureWorker,
} from "../../src/capture/index.ts";
import { createPool } from "../../src/db/index.ts";
import { startJobs } from "../../src/jobs/index.ts";
import {
  captureFixture,
  captureLockHolders,
  quietLog,
  type CaptureFixture,
} from "../support/capture.ts";
import { freePort } from "../../src/ports.ts";
import { capturedLogger } from "../http/support.ts";
import { eventually } from "../support/eventually.ts";
import { feed } from "../support/history.ts";

/** The accesslog source with passes `interval` apart, and no reconciliation or snapshots. */
const every = (interval: number) => ({
  source: "accesslog" as const,
  interval,
  reconcileInterval: 600_000,
  snapshotInterval: 0,
});

/** Adds a person with what inetOrgPerson requires, and waits until capture records it. */
async function addCaptured(f: CaptureFixture, uid: string, timeout?: number): Promise<void> {
  await f.directory.add(`uid=${uid},ou=people,dc=example,dc=org`, {
    objectClass: ["inetOrgPerson"],
    uid,
    cn: uid,
    sn: uid,
  });
  await eventually(
    async () => (await feed(f.db.pool)).some((c) => c.dn.startsWith(`uid=${uid},`)) || undefined,
    { what: `${uid} is captured`, ...(timeout === undefined ? {} : { timeout }) },
  );
}

t.test("the capture worker records changes without being asked", async (t) => {
  const f = await captureFixture(t);
  // The first start imports what exists; only what changes after it is a change.
  await f.sync();
  const worker = await startCaptureWorker(f.context, every(200));
  t.teardown(() => worker.stop());
  await addCaptured(f, "auto");
  t.same(
    (await feed(f.db.pool)).map((c) => [c.change_type, c.dn]),
    [["add", "uid=auto,ou=people,dc=example,dc=org"]],
  );
  const now = await worker.captureNow();
  t.equal(now.recorded, 0, "a pass on demand finds nothing more");

  // Each pass notes how it went, for /readyz: a success, then, with the directory gone,
  // failures in a row with the last error.
  t.match(await readCaptureStatus(f.db.pool, "accesslog"), {
    consecutiveFailures: 0,
    lastSuccessAt: Date,
  });
  await f.slapd.stop();
  const failing = await eventually(
    async () => {
      const status = await readCaptureStatus(f.db.pool, "accesslog");
      return status.consecutiveFailures >= 2 ? status : undefined;
    },
    { what: "failed passes are noted" },
  );
  t.match(failing.lastError, { code: /^ANNAL_/, message: String, at: Date });
});

t.test(
  "a write the directory tells of is captured at once, not at the next interval",
  async (t) => {
    const f = await captureFixture(t);
    await f.sync();
    // Ten minutes between passes: only the accesslog watch can bring the writes in sooner.
    const worker = await startCaptureWorker(f.context, every(600_000));
    t.teardown(() => worker.stop());
    for (const uid of ["told1", "told2", "told3"]) await addCaptured(f, uid, 10_000);
    t.same(
      (await feed(f.db.pool)).map((c) => c.dn),
      ["told1", "told2", "told3"].map((uid) => `uid=${uid},ou=people,dc=example,dc=org`),
    );
  },
);

t.test(
  "without syncprov on the accesslog, capture says so once and looks every interval",
  async (t) => {
    const f = await captureFixture(t, { syncprov: false });
    await f.sync();
    const noted: { level: string; message: string }[] = [];
    const log =
      (level: string) =>
      (...args: unknown[]) => {
        noted.push({ level, message: String(args.at(-1)) });
      };
    const worker = await startCaptureWorker(
      {
        ...f.context,
        log: { info: log("info"), warn: log("warn"), error: log("error"), debug() {} },
      },
      every(100),
    );
    t.teardown(() => worker.stop());
    await eventually(async () => noted.length > 0 || undefined, { what: "the refusal is noted" });
    await addCaptured(f, "polled");
    t.same(
      noted.map((n) => n.level),
      ["info"],
      "one note, no warnings or errors",
    );
    t.match(noted[0]?.message, /syncprov overlay on the accesslog database/);
  },
);

/** Passes 50 ms apart, and no reconciliation or snapshots to get in their way. */
const schedule = every(50);

t.test("a worker that stops, or loses its connection, hands capture to another", async (t) => {
  const f = await captureFixture(t);
  await f.sync();
  const holders = () => captureLockHolders(f.db.pool);

  const add = (uid: string) => addCaptured(f, uid);
  // Two processes' workers, each with its own pool: one lock between them, the first's.
  const first = await startCaptureWorker(f.context, schedule);
  const [holder] = await eventually(async () => {
    const pids = await holders();
    return pids.length === 1 ? pids : undefined;
  });
  const otherPool = createPool(f.db.url, 4);
  t.teardown(() => otherPool.end());
  const second = await startCaptureWorker({ ...f.context, pool: otherPool }, schedule);
  t.teardown(() => second.stop());
  await add("before");
  await first.stop();
  await add("after-stop");
  // The holder's connection is cut: PostgreSQL releases the lock with the session.
  const [next] = await eventually(async () => {
    const pids = await holders();
    return pids.length === 1 && pids[0] !== holder ? pids : undefined;
  });
  // Its watch delivering, it waits 30 s between turns: losing the lock must not wait for that.
  await eventually(() => second.watched(), { what: "the second worker's watch delivers" });
  await f.db.pool.query("SELECT pg_terminate_backend($1)", [next]);
  t.ok(
    (await eventually(
      async () => {
        const pids = await holders();
        return pids.length === 1 && pids[0] !== next ? pids : undefined;
      },
      { what: "another session holds the lock" },
    )) !== undefined,
    "another session holds the lock",
  );
  await add("after-kill");
});

t.test(
  "the pg-boss queue capture once ran as is removed: its schedule first, then the queue",
  async (t) => {
    const f = await captureFixture(t);
    const jobs = await startJobs({ pool: f.db.pool, log: quietLog });
    t.teardown(() => jobs.stop());
    // As an older annal left it.
    await jobs.ensureQueue("annal-capture", { policy: "stately", retryLimit: 0 });
    await jobs.boss.schedule("annal-capture", "* * * * *", {});
    await jobs.boss.send("annal-capture", {});
    await retireCaptureQueue(jobs);
    t.same(
      (await jobs.boss.getSchedules()).filter((s) => s.name === "annal-capture"),
      [],
      "the first start removes the schedule",
    );
    t.not(
      await jobs.boss.getQueue("annal-capture"),
      null,
      "and keeps the queue, for a job the schedule may already have on its way",
    );
    await retireCaptureQueue(jobs);
    t.equal(await jobs.boss.getQueue("annal-capture"), null, "a later start removes the queue");
    await retireCaptureQueue(jobs);
    t.pass("removing it again does nothing");
  },
);

t.test(
  "a worker waiting for the lock tries again on one connection of its own, and takes none of the pool's",
  async (t) => {
    const f = await captureFixture(t);
    await f.sync();
    const holding = await startCaptureWorker(f.context, schedule);
    t.teardown(() => holding.stop());
    const [holder] = await eventually(
      async () => {
        const pids = await captureLockHolders(f.db.pool);
        return pids.length === 1 ? pids : undefined;
      },
      { what: "the first worker holds the lock" },
    );
    // The waiting worker's pool counts the connections it lends.
    let lent = 0;
    const pool = f.db.pool;
    const counting = new Proxy(pool, {
      get(target, property) {
        if (property !== "connect") return Reflect.get(target, property, target);
        return async () => {
          lent++;
          return target.connect();
        };
      },
    });
    const waiting = await startCaptureWorker({ ...f.context, pool: counting }, schedule);
    t.teardown(() => waiting.stop());
    // Its lock connection (beside the pool) and the moment of its latest try for the lock.
    // What the lock's connections last showed is kept, for the message when a try is not seen.
    let seen: unknown[] = [];
    const tries = async () => {
      const found = await pool.query<{ pid: number; at: Date; state: string; query: string }>(
        `SELECT pid, state_change AS at, state, query FROM pg_stat_activity
          WHERE application_name LIKE 'annal-capture-lock:%'`,
      );
      seen = found.rows;
      return found.rows.find(
        (row) =>
          row.pid !== holder && row.state === "idle" && row.query.includes("pg_try_advisory_lock"),
      );
    };
    const first = await eventually(tries, { what: "the waiting worker's first try" });
    const again = await eventually(
      async () => {
        const now = await tries();
        return now && now.at > first.at ? now : undefined;
      },
      { what: "the waiting worker's next try" },
    ).catch((error: unknown) => {
      throw new Error(
        `${String(error)}; first try ${JSON.stringify(first)}; the lock's connections: ${JSON.stringify(seen)}`,
      );
    });
    t.equal(again.pid, first.pid, "it tries again on the same connection");
    t.equal(lent, 0, "the pool lent the waiting worker no connection");
  },
);

t.test(
  "a worker whose database is away asks for the lock once a standby, not again and again",
  async (t) => {
    const f = await captureFixture(t);
    // Nothing listens on this port: each try to open the lock's connection fails at once.
    const away = createPool(`postgres://annal@127.0.0.1:${await freePort()}/away`, 2);
    t.teardown(() => away.end());
    const { log, lines } = capturedLogger();
    const tries = () =>
      lines.filter((line) => String(line.msg).startsWith("could not ask for capture's lock"));
    const started = performance.now();
    const worker = await startCaptureWorker({ ...f.context, pool: away, log }, schedule);
    t.teardown(() => worker.stop());
    await eventually(() => tries().length >= 3 || undefined, { what: "three tries for the lock" });
    const seconds = (performance.now() - started) / 1000;
    // A failed try woke the loop at once (the wake-up meant for a leader that loses its lock),
    // so a process whose database was gone tried thousands of times a second, logging each.
    t.ok(
      tries().length <= seconds + 2,
      `${tries().length} tries in ${seconds.toFixed(1)} s: one a second, the standby's wait`,
    );
  },
);
