import t, { type Test } from "tap";
import { captureOnce, reconcileByPolling, type CaptureContext } from "../../src/capture/index.ts";
import {
  DirectoryClient,
  renderFilter,
  type DirectoryClientOptions,
  type DirectoryEntry,
  type SearchOptions,
} from "../../src/directory/index.ts";
import { captureFixture, person, type CaptureFixture } from "../support/capture.ts";
import { nextSecond } from "../support/clock.ts";

/**
 * Poll capture loses no write: a write whose resulting state differs from the last one
 * recorded is recorded, however coarse the server's clock and whether or not it has an
 * `entryCSN`. Two writes in one second share a `modifyTimestamp` (389 Directory Server has
 * nothing finer); Active Directory returns neither `entryCSN` nor, for `*` and `+`,
 * `modifyTimestamp`. A real slapd is read as it answers and as those servers would.
 */
t.setTimeout(240_000);

const PEOPLE = "ou=people,dc=example,dc=org";

/** How a server answers a search: which of slapd's attributes it never or only by name returns. */
const SERVERS = {
  slapd: { never: [], onlyByName: [] },
  "389 (no entryCSN)": { never: ["entrycsn"], onlyByName: [] },
  "AD (no entryCSN; modifyTimestamp only by name)": {
    never: ["entrycsn"],
    onlyByName: ["modifytimestamp", "createtimestamp"],
  },
} as const;
type Server = keyof typeof SERVERS;

/**
 * A real slapd read as `server` answers: the attributes that server has not, or returns only
 * when asked for by name, are left out of each entry. It notes each search's filter and
 * attribute list, as sent.
 */
class AnsweringAs extends DirectoryClient {
  readonly server: Server;
  readonly sent: { filter: string; attributes: readonly string[] }[] = [];

  constructor(server: Server, options: DirectoryClientOptions) {
    super(options);
    this.server = server;
  }

  override async *search(
    base: string,
    options: SearchOptions = {},
  ): AsyncGenerator<DirectoryEntry[], void, undefined> {
    const asked = new Set((options.attributes ?? []).map((name) => name.toLowerCase()));
    this.sent.push({
      filter: options.filter ? renderFilter(options.filter) : "(objectClass=*)",
      attributes: options.attributes ?? [],
    });
    const { never, onlyByName } = SERVERS[this.server];
    const hidden = (name: string) => {
      const lower = name.toLowerCase();
      return (
        (never as readonly string[]).includes(lower) ||
        ((onlyByName as readonly string[]).includes(lower) && !asked.has(lower))
      );
    };
    for await (const page of super.search(base, options)) {
      yield page.map((entry) => ({
        dn: entry.dn,
        attributes: Object.fromEntries(
          Object.entries(entry.attributes).filter(([name]) => !hidden(name)),
        ),
      }));
    }
  }
}

async function pollFixture(t: Test, server: Server) {
  const f = await captureFixture(t, { source: "poll" });
  const directory = new AnsweringAs(server, {
    url: f.slapd.url,
    bindDN: f.slapd.bindDN,
    password: f.slapd.password,
  });
  t.teardown(() => directory.close());
  const context: CaptureContext = { ...f.context, directory };
  await captureOnce(context, "poll"); // the first start: the import
  return { f, context, directory };
}

/** The entry's modifyTimestamp, read from slapd itself. */
async function modifyTimestampOf(f: CaptureFixture, dn: string): Promise<string> {
  const entry = await f.directory.get(dn, { attributes: ["modifyTimestamp"] });
  return String(entry?.attributes.modifyTimestamp?.[0]);
}

/**
 * Adds an entry, then makes each of `titles` its title in turn, a poll pass reading the entry
 * after each write, all in one second of the directory's clock (their `modifyTimestamp`s are
 * equal). A run that straddles a second is tried again with a new entry, a few times at most.
 */
async function titlesInOneSecond(
  t: Test,
  f: CaptureFixture,
  context: CaptureContext,
  titles: readonly string[],
): Promise<{ dn: string; uuid: string; second: string }> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const uid = `w${attempt}`;
    const dn = `uid=${uid},${PEOPLE}`;
    await f.directory.add(dn, person(uid));
    await captureOnce(context, "poll");
    // Start early in a second: the writes and the passes between them take some milliseconds.
    if (Date.now() % 1000 > 200) await nextSecond();
    const stamps: string[] = [];
    for (const title of titles) {
      await f.directory.modify(dn, [{ operation: "replace", attribute: "title", values: title }]);
      stamps.push(await modifyTimestampOf(f, dn));
      await captureOnce(context, "poll");
    }
    if (new Set(stamps).size === 1) {
      const entry = await f.directory.get(dn, { attributes: ["entryUUID"] });
      return { dn, uuid: String(entry?.attributes.entryUUID?.[0]), second: stamps[0]! };
    }
    t.comment(`attempt ${attempt}: the writes straddled a second (${stamps.join(", ")})`);
  }
  throw new Error("five runs of writes each straddled a second");
}

/** The entry's events: type and the title each left. */
async function titlesRecorded(f: CaptureFixture, uuid: string) {
  const result = await f.db.pool.query<{ type: string; title: string[] | null }>(
    `SELECT type, data->'after'->'attributes'->'title' AS title FROM events
      WHERE stream_id = $1 ORDER BY stream_version`,
    [`entry-${uuid.toLowerCase()}`],
  );
  return result.rows.map((row) => [row.type, row.title?.[0] ?? null]);
}

for (const server of Object.keys(SERVERS) as Server[]) {
  t.test(
    `${server}: two writes to one entry within one second are both recorded, in order, with their states`,
    async (t) => {
      const { f, context } = await pollFixture(t, server);
      const { uuid, second } = await titlesInOneSecond(t, f, context, ["First", "Second"]);
      t.comment(`both writes at ${second}`);
      t.same(await titlesRecorded(f, uuid), [
        ["EntryAdded", null],
        ["EntryModified", "First"],
        ["EntryModified", "Second"],
      ]);
    },
  );

  t.test(
    `${server}: a write back to an earlier state (A, B, A in one second) is recorded, and ` +
      "reading the same state again records nothing",
    async (t) => {
      const { f, context } = await pollFixture(t, server);
      const { uuid } = await titlesInOneSecond(t, f, context, ["A", "B", "A"]);
      const expected = [
        ["EntryAdded", null],
        ["EntryModified", "A"],
        ["EntryModified", "B"],
        ["EntryModified", "A"],
      ];
      t.same(await titlesRecorded(f, uuid), expected);
      t.equal((await captureOnce(context, "poll")).recorded, 0, "a second pass records nothing");
      t.equal(
        (await reconcileByPolling(context)).recorded,
        0,
        "nor does a reconciliation over the same state",
      );
      t.same(await titlesRecorded(f, uuid), expected);
    },
  );
}

t.test(
  "the poll search asks for modifyTimestamp by name, filters with a time every server reads " +
    "(…SS.0Z), and its checkpoint moves on where modifyTimestamp comes only by name",
  async (t) => {
    const server = "AD (no entryCSN; modifyTimestamp only by name)";
    const { f, context, directory } = await pollFixture(t, server);
    const dn = `uid=moves,${PEOPLE}`;
    await nextSecond();
    await f.directory.add(dn, person("moves"));
    const added = await modifyTimestampOf(f, dn);
    directory.sent.length = 0;
    await captureOnce(context, "poll");
    const polled = directory.sent.at(-1)!;
    t.match(polled.filter, /^\(modifyTimestamp>=\d{14}\.0Z\)$/, "the filter's time has a fraction");
    t.ok(
      polled.attributes.some((name) => name.toLowerCase() === "modifytimestamp"),
      "modifyTimestamp is asked for by name",
    );
    const checkpoint = await f.db.pool.query<{ position: string }>(
      "SELECT position FROM capture_checkpoints WHERE source = 'poll'",
    );
    t.equal(
      checkpoint.rows[0]?.position.slice(0, 14),
      added.slice(0, 14),
      "the checkpoint is the second of the newest write read",
    );
    await captureOnce(context, "poll");
    t.equal(
      directory.sent.at(-1)?.filter,
      `(modifyTimestamp>=${added.slice(0, 14)}.0Z)`,
      "the next pass reads from there",
    );
  },
);

t.test(
  "a change noted as not recorded hides no later different change of the entry in the same " +
    "second, and is noted once however often it is read",
  async (t) => {
    const { f, context } = await pollFixture(t, "389 (no entryCSN)");
    // The database refuses an entry's event that leaves its title "Poison", as it may refuse
    // a value it cannot hold.
    await f.db.pool.query(`
      CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.type LIKE 'Entry%' AND NEW.data->'after'->'attributes'->'title'->>0 = 'Poison' THEN
          RAISE EXCEPTION 'refused';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_poison BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_poison();`);
    const { uuid } = await titlesInOneSecond(t, f, context, ["Poison", "Fine", "Poison"]);
    await captureOnce(context, "poll"); // reads the last "Poison" again
    t.same(await titlesRecorded(f, uuid), [
      ["EntryAdded", null],
      ["EntryModified", "Fine"],
    ]);
    const noted = await f.db.pool.query<{ change_id: string }>(
      `SELECT data->>'changeId' AS change_id FROM events
        WHERE type = 'DirectoryChangeNotRecorded' ORDER BY position`,
    );
    t.equal(noted.rowCount, 2, "each refused change is noted, once");
    t.not(noted.rows[0]?.change_id, noted.rows[1]?.change_id);
  },
);
