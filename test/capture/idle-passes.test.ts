import { monitorEventLoopDelay } from "node:perf_hooks";
import t from "tap";
import { captureFromAccesslog, startCaptureWorker } from "../../src/capture/index.ts";
import { equalityIndexed } from "../../src/capture/accesslog-indexes.ts";
import type { DirectoryClient } from "../../src/directory/index.ts";
import { captureFixture, person, type CaptureFixture } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { feed } from "../support/history.ts";

const PEOPLE = "ou=people,dc=example,dc=org";

/**
 * The fixture's directory client, counting the searches of the accesslog and the entries they
 * return. The server and the client are real; only the count is added.
 */
function countingAccesslogReads(f: CaptureFixture) {
  const counts = { searches: 0, entries: 0 };
  const directory = new Proxy(f.directory, {
    get(target, property) {
      if (property !== "search") return Reflect.get(target, property, target);
      return async function* (...args: Parameters<DirectoryClient["search"]>) {
        const accesslog = args[0].toLowerCase() === "cn=accesslog";
        if (accesslog) counts.searches++;
        for await (const page of target.search(...args)) {
          if (accesslog) counts.entries += page.length;
          yield page;
        }
      };
    },
  });
  return { counts, context: { ...f.context, directory } };
}

t.test(
  "an idle pass after a large group's add reads nothing from the accesslog, and does not hold the event loop",
  async (t) => {
    const f = await captureFixture(t);
    await f.sync();
    const members = Array.from({ length: 100_000 }, (_, i) => `uid=m${i},${PEOPLE}`);
    await f.directory.add("cn=everyone,ou=groups,dc=example,dc=org", {
      objectClass: ["groupOfNames"],
      cn: "everyone",
      member: members,
    });
    t.equal(await f.sync(), 1, "the group's add is recorded");

    const { counts, context } = countingAccesslogReads(f);
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    for (let i = 0; i < 3; i++) t.equal((await captureFromAccesslog(context)).recorded, 0);
    delay.disable();
    t.equal(counts.searches, 3);
    t.equal(counts.entries, 0, "the checkpoint's own record (5.6 MB of reqMod) is left out");
    // Reading and decoding the record blocked the loop 60 to 250 ms a pass (103.9 ms at most
    // in three passes, measured here); an idle pass now has nothing to decode (2.3 ms). The
    // bound is generous for a loaded machine (58 ms was seen in a suite on two busy cores:
    // the collector cleaning up after the group's add), and the count above is the proof.
    t.ok(delay.max / 1e6 < 100, `the loop was held at most ${(delay.max / 1e6).toFixed(1)} ms`);

    // The next write is still found: the checkpoint's record is left out, nothing after it.
    await f.directory.add(`uid=after,${PEOPLE}`, person("after"));
    t.equal((await captureFromAccesslog(context)).recorded, 1);
    t.equal(counts.entries, 1);
  },
);

t.test(
  "while the directory tells of each write, the passes run only when woken (or every 30 s)",
  async (t) => {
    const f = await captureFixture(t);
    await f.sync();
    const { counts, context } = countingAccesslogReads(f);
    // 10 ms between passes unless the watch delivers: a hundred passes a second.
    const worker = await startCaptureWorker(context, {
      source: "accesslog",
      interval: 10,
      reconcileInterval: 600_000,
      snapshotInterval: 0,
    });
    t.teardown(() => worker.stop());
    await eventually(async () => worker.watched(), { what: "the accesslog watch delivers" });
    const before = counts.searches;
    const uids = ["w1", "w2", "w3", "w4", "w5"];
    for (const uid of uids) {
      await f.directory.add(`uid=${uid},${PEOPLE}`, person(uid));
      await eventually(
        async () => (await feed(f.db.pool)).some((c) => c.dn === `uid=${uid},${PEOPLE}`),
        { what: `${uid} is captured` },
      );
    }
    const passes = counts.searches - before;
    // One pass a write told of (two writes may share one), and at most one that was under way.
    t.ok(passes <= uids.length + 1, `${passes} passes for ${uids.length} writes`);
  },
);

t.test(
  "capture says once when the accesslog has no index of reqEnd, with the line to add",
  async (t) => {
    const noted: { level: string; message: string }[] = [];
    const log =
      (level: string) =>
      (...args: unknown[]) => {
        noted.push({ level, message: String(args.at(-1)) });
      };
    const quiet = { info: log("info"), warn: log("warn"), error: log("error"), debug() {} };
    const schedule = {
      source: "accesslog" as const,
      interval: 20,
      reconcileInterval: 600_000,
      snapshotInterval: 0,
    };

    const unindexed = await captureFixture(t, {
      accesslogIndexed: ["objectClass", "reqStart", "reqResult"],
    });
    await unindexed.sync();
    const worker = await startCaptureWorker({ ...unindexed.context, log: quiet }, schedule);
    t.teardown(() => worker.stop());
    await eventually(async () => noted.some((n) => n.level === "warn") || undefined, {
      what: "the missing index is said",
    });
    await unindexed.directory.add(`uid=seen,${PEOPLE}`, person("seen"));
    await eventually(
      async () => (await feed(unindexed.db.pool)).some((c) => c.dn === `uid=seen,${PEOPLE}`),
      { what: "capture goes on without the index" },
    );
    const warnings = noted.filter((n) => n.level === "warn");
    t.equal(warnings.length, 1, "said once");
    t.match(warnings[0]?.message, /no index of reqEnd/);
    t.match(warnings[0]?.message, /olcDbIndex: reqEnd eq/);
    t.match(warnings[0]?.message, /index reqEnd eq/);
    await worker.stop();

    noted.length = 0;
    const indexed = await captureFixture(t);
    await indexed.sync();
    const quietWorker = await startCaptureWorker({ ...indexed.context, log: quiet }, schedule);
    t.teardown(() => quietWorker.stop());
    await indexed.directory.add(`uid=fine,${PEOPLE}`, person("fine"));
    await eventually(
      async () => (await feed(indexed.db.pool)).some((c) => c.dn === `uid=fine,${PEOPLE}`),
      { what: "the add is captured" },
    );
    t.same(
      noted.filter((n) => n.level === "warn"),
      [],
      "nothing is said when the index is there",
    );
  },
);

t.test("olcDbIndex values: attribute lists, index types and the default", async (t) => {
  t.same([...equalityIndexed(["objectClass,reqStart,reqEnd eq", "cn eq,sub"])].sort(), [
    "cn",
    "objectclass",
    "reqend",
    "reqstart",
  ]);
  t.same([...equalityIndexed(["reqEnd pres"])], [], "presence only is no equality index");
  t.same([...equalityIndexed(["default eq", "reqEnd"])], ["reqend"], "default's types");
  t.same([...equalityIndexed(["reqEnd"])], [], "no types and no default: nothing");
});
