import t from "tap";
import {
  captureFromAccesslog,
  readCaptureCheckpoint,
  startCaptureWorker,
} from "../../src/capture/index.ts";
import { accesslogWritesAfter } from "../../src/capture/from-accesslog.ts";
import { ACCESSLOG_ATTRIBUTES, ACCESSLOG_BINARY } from "../../src/capture/accesslog.ts";
import type { CaptureContext } from "../../src/capture/index.ts";
import { PushedWrites } from "../../src/capture/pushed.ts";
import {
  createDirectoryClient,
  type DirectoryClient,
  type DirectoryEntry,
} from "../../src/directory/index.ts";
import { captureFixture, peopleLdif, person, type CaptureFixture } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { feed } from "../support/history.ts";

const PEOPLE = "ou=people,dc=example,dc=org";

/** The fixture's directory client, counting its searches of the accesslog. */
function countingAccesslogSearches(f: CaptureFixture) {
  const counts = { searches: 0 };
  const directory = new Proxy(f.directory, {
    get(target, property) {
      if (property !== "search") return Reflect.get(target, property, target);
      return (...args: Parameters<DirectoryClient["search"]>) => {
        if (args[0].toLowerCase() === "cn=accesslog") counts.searches++;
        return target.search(...args);
      };
    },
  });
  return { counts, context: { ...f.context, directory } };
}

/** The fixture's log, with its warnings and errors told to `sink` instead. */
function recordingLog(
  f: CaptureFixture,
  sink: (level: "warn" | "error", message: string) => void,
): CaptureContext["log"] {
  const to = (level: "warn" | "error") =>
    ((_: unknown, message?: string) => sink(level, message ?? "")) as CaptureContext["log"]["warn"];
  return { ...f.context.log, warn: to("warn"), error: to("error") };
}

/** The accesslog's records after capture's checkpoint, as the watch would push them. */
async function recordsAfterCheckpoint(f: CaptureFixture): Promise<DirectoryEntry[]> {
  const checkpoint = (await readCaptureCheckpoint(f.db.pool, "accesslog"))!;
  const entries: DirectoryEntry[] = [];
  for await (const page of f.directory.search("cn=accesslog", {
    scope: "one",
    filter: accesslogWritesAfter(checkpoint),
    attributes: [...ACCESSLOG_ATTRIBUTES],
    binaryAttributes: [...ACCESSLOG_BINARY],
  })) {
    entries.push(...page);
  }
  return entries.sort((a, b) => text(a, "reqEnd").localeCompare(text(b, "reqEnd")));
}

const text = (entry: DirectoryEntry, name: string) => String(entry.attributes[name]![0]);

/** Whether the record's change is in the log (its idempotency key is its reqStart). */
async function inLog(f: CaptureFixture, record: DirectoryEntry): Promise<boolean> {
  const found = await f.db.pool.query("SELECT 1 FROM events WHERE idempotency_key = $1", [
    `accesslog:${text(record, "reqStart")}`,
  ]);
  return found.rowCount === 1;
}

t.test(
  "each write the directory pushes on the watch is recorded as it comes, without a search of the accesslog",
  async (t) => {
    const f = await captureFixture(t);
    await f.sync();
    const { counts, context } = countingAccesslogSearches(f);
    // No pass by the clock while the test runs: only the first, and those a gap asks for.
    const worker = await startCaptureWorker(context, {
      source: "accesslog",
      interval: 600_000,
      reconcileInterval: 600_000,
      snapshotInterval: 0,
    });
    t.teardown(() => worker.stop());
    await eventually(async () => worker.watched(), { what: "the accesslog watch delivers" });
    const before = counts.searches;

    const dn = `uid=pushed,${PEOPLE}`;
    await f.directory.add(dn, person("pushed"));
    await f.directory.modify(dn, [
      { operation: "replace", attribute: "title", values: ["Engineer"] },
    ]);
    await f.directory.modify(dn, [
      { operation: "replace", attribute: "title", values: ["Architect"] },
    ]);
    await f.directory.delete(dn);
    const changes = await eventually(
      async () => {
        const recorded = (await feed(f.db.pool)).filter((c) => c.dn === dn);
        return recorded.length === 4 ? recorded : undefined;
      },
      { what: "the four writes are recorded" },
    );
    t.same(
      changes.map((c) => c.change_type),
      ["add", "modify", "modify", "delete"],
      "every write, in order",
    );
    t.equal(counts.searches - before, 0, "no pass searched the accesslog for them");

    // A pass reading the same records afterwards finds each recorded under the same key.
    t.equal((await captureFromAccesslog(f.context)).recorded, 0, "a pass records nothing again");
  },
);

t.test("a pushed record is taken only where it follows capture's checkpoint", async (t) => {
  const f = await captureFixture(t);
  await f.sync();
  const logged: { level: string; message: string }[] = [];
  const context = {
    ...f.context,
    log: recordingLog(f, (level, message) => logged.push({ level, message })),
  };
  const pushedTo = (opened: string) => {
    const gaps = { count: 0 };
    const pushed = new PushedWrites(context, opened, { onGap: () => gaps.count++ });
    return { pushed, gaps, take: (entry: DirectoryEntry) => pushed.take(async () => entry) };
  };

  await t.test(
    "after a record it did not see, nothing is taken and a pass is asked for",
    async (t) => {
      await f.directory.add(`uid=first,${PEOPLE}`, person("first"));
      await f.directory.add(`uid=second,${PEOPLE}`, person("second"));
      const [first, second] = await recordsAfterCheckpoint(f);
      // A watch opened from an older checkpoint, whose records before `second` were dropped
      // (or never came): what lies between is not known to be recorded.
      const { pushed, gaps, take } = pushedTo("20000101000000.000000Z");
      take(second!);
      await pushed.settled();
      t.equal(gaps.count, 1, "a pass is asked for");
      t.notOk(await inLog(f, second!), "the record after the gap is not taken");
      t.equal(await f.sync(), 2, "the pass records both, in order");
      t.equal(text(first!, "reqDN"), `uid=first,${PEOPLE}`);
    },
  );

  await t.test(
    "records that follow one another are taken, those a pass took are not again",
    async (t) => {
      await f.directory.add(`uid=third,${PEOPLE}`, person("third"));
      await f.directory.add(`uid=fourth,${PEOPLE}`, person("fourth"));
      const [third, fourth] = await recordsAfterCheckpoint(f);
      const checkpoint = (await readCaptureCheckpoint(f.db.pool, "accesslog"))!;
      const { pushed, gaps, take } = pushedTo(checkpoint);
      take(third!);
      take(fourth!);
      await pushed.settled();
      t.equal(gaps.count, 0);
      await eventually(
        async () => {
          const dns = (await feed(f.db.pool)).map((c) => c.dn);
          return dns.includes(`uid=third,${PEOPLE}`) && dns.includes(`uid=fourth,${PEOPLE}`);
        },
        { what: "both records taken reach the change feed" },
      );
      t.equal(
        await readCaptureCheckpoint(f.db.pool, "accesslog"),
        text(fourth!, "reqEnd"),
        "the checkpoint moves on to the last record taken",
      );
      // The same records pushed again (a watch opened anew from an older checkpoint).
      const again = pushedTo(checkpoint);
      again.take(third!);
      again.take(fourth!);
      await again.pushed.settled();
      t.equal(again.gaps.count, 0, "records behind the checkpoint need no pass");
      t.same(logged, [], "and are not reported: they are in the log");
    },
  );

  await t.test(
    "a record pushed behind one already taken, and not in the log, is said loudly",
    async (t) => {
      await f.directory.add(`uid=fifth,${PEOPLE}`, person("fifth"));
      await f.directory.add(`uid=sixth,${PEOPLE}`, person("sixth"));
      const [fifth, sixth] = await recordsAfterCheckpoint(f);
      const checkpoint = (await readCaptureCheckpoint(f.db.pool, "accesslog"))!;
      const { pushed, take } = pushedTo(checkpoint);
      // Out of the order slapd logged them: never seen from slapd, but not to pass unsaid.
      take(sixth!);
      take(fifth!);
      await pushed.settled();
      t.match(logged, [{ level: "error", message: /out of the order it logged them/ }]);
    },
  );
});

/**
 * What the push rests on: slapd sends the accesslog's records in the order it logs them, with
 * many clients writing at once too (capture's place is a `reqEnd`: see concurrent-writers).
 */
t.test("writes made at once by many clients are each recorded once by the push", async (t) => {
  const WRITERS = 8;
  const WRITES_EACH = 100;
  const f = await captureFixture(t, { seedLdif: peopleLdif(WRITERS) });
  await f.sync();
  const complaints: string[] = [];
  const { counts, context } = countingAccesslogSearches(f);
  const worker = await startCaptureWorker(
    {
      ...context,
      log: recordingLog(f, (_, message) => complaints.push(message)),
    },
    { source: "accesslog", interval: 600_000, reconcileInterval: 600_000, snapshotInterval: 0 },
  );
  t.teardown(() => worker.stop());
  await eventually(async () => worker.watched(), { what: "the accesslog watch delivers" });
  const before = counts.searches;

  const clients = Array.from({ length: WRITERS }, () =>
    createDirectoryClient({ url: f.slapd.url, bindDN: f.slapd.bindDN, password: f.slapd.password }),
  );
  t.teardown(() => Promise.all(clients.map((c) => c.close())));
  await Promise.all(
    clients.map(async (client, i) => {
      for (let n = 0; n < WRITES_EACH; n++) {
        await client.modify(`uid=p${i},ou=people,dc=example,dc=org`, [
          { operation: "replace", attribute: "description", values: `p${i}-${n}` },
        ]);
      }
    }),
  );
  const written = WRITERS * WRITES_EACH;
  let seen = 0;
  const recorded = await eventually(
    async () => {
      const { rows } = await f.db.pool.query<{ value: string; n: number }>(
        `SELECT data->'after'->'attributes'->'description'->>0 AS value, count(*)::int AS n
           FROM events WHERE type = 'EntryModified' GROUP BY 1`,
      );
      seen = rows.length;
      return rows.length === written ? rows : undefined;
    },
    // Generous: the suite's other files share the machine's two cores.
    { what: `all ${written} writes recorded`, timeout: 120_000 },
  ).catch((error: unknown) => {
    throw new Error(`${seen} of ${written} recorded; complaints: ${complaints.join("; ")}`, {
      cause: error,
    });
  });
  t.same(
    recorded.filter((row) => row.n !== 1),
    [],
    `each of the ${written} writes is one change`,
  );
  t.same(complaints, [], "no record came out of order, none failed");
  t.equal(counts.searches - before, 0, "every one came by the push");
});
