import t from "tap";
import {
  captureOnce,
  readStoredText,
  storableText,
  type CaptureSource,
} from "../../src/capture/index.ts";
import { capturedLogger } from "../http/support.ts";
import { captureFixture, person } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { feed } from "../support/history.ts";

/**
 * Capture never stalls on a value: a value jsonb cannot hold is stored losslessly, and a
 * change that cannot be recorded at all is noted as such while every change after it is
 * recorded. No value reaches a log line, PostgreSQL's error details included.
 */
t.setTimeout(180_000);

const PEOPLE = "ou=people,dc=example,dc=org";

t.test("the stored form of a text value reads back exactly", async (t) => {
  for (const value of [
    "plain",
    "a\u0000b",
    "\u0000",
    "\uFFFFb64:YQ==",
    "\uFFFF",
    "été 🌍 \u0000",
  ]) {
    t.equal(readStoredText(storableText(value)), value, JSON.stringify(value));
    t.notOk(storableText(value).includes("\u0000"), "jsonb can hold the stored form");
  }
  t.equal(storableText("plain"), "plain", "ordinary values are stored as they are");
});

for (const source of ["accesslog", "poll"] as const satisfies CaptureSource[]) {
  t.test(
    `${source}: a value with U+0000 is recorded losslessly, and capture goes on`,
    async (t) => {
      const f = await captureFixture(t, { source });
      await f.sync();
      const withNul = "first line\u0000second part";
      await f.directory.add(`uid=nul,${PEOPLE}`, person("nul", { description: withNul }));
      t.ok((await f.sync()) >= 1, "the change is recorded");
      await f.directory.add(`uid=after,${PEOPLE}`, person("after"));
      await f.sync();
      const changes = await feed(f.db.pool);
      const added = changes.find((c) => c.dn === `uid=nul,${PEOPLE}`);
      t.ok(added, "the entry with U+0000 is in the feed");
      const stored = (added.patch as { path: string; value: string[] }[]).find(
        (op) => op.path === "/description",
      )!.value;
      t.same(stored.map(readStoredText), [withNul], "read back byte for byte");
      t.ok(
        changes.some((c) => c.dn === `uid=after,${PEOPLE}`),
        "a later change is recorded too",
      );
    },
  );
}

t.test("a change the database refuses is noted, and every later change is recorded", async (t) => {
  const secret = `s3cret-${Math.random().toString(36).slice(2)}`;
  const f = await captureFixture(t);
  await f.sync();
  // The database refuses the events of one entry, quoting the value in its error's DETAIL
  // (as PostgreSQL's own errors may). A real refusal, by a real trigger.
  await f.db.pool.query(`
    CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.type LIKE 'Entry%' AND NEW.data->>'dn' LIKE 'uid=poison,%' THEN
        RAISE EXCEPTION 'refused' USING DETAIL = 'the row was ' || NEW.data::text;
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER refuse_poison BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_poison();`);
  await f.directory.add(`uid=poison,${PEOPLE}`, person("poison", { title: secret }));
  await f.directory.add(`uid=fine,${PEOPLE}`, person("fine", { title: "Fine" }));

  const { log, text } = capturedLogger();
  // Passes until the accesslog shows the later change (slapd writes it as the add returns,
  // or a moment after), then one more: a change is never noted twice.
  const changes = await eventually(
    async () => {
      await captureOnce({ ...f.context, log }, "accesslog");
      const rows = await feed(f.db.pool);
      return rows.some((c) => c.dn === `uid=fine,${PEOPLE}`) ? rows : undefined;
    },
    { what: "the change after the refused one is recorded" },
  );
  await captureOnce({ ...f.context, log }, "accesslog");
  t.notOk(changes.some((c) => c.dn === `uid=poison,${PEOPLE}`));
  const noted = await f.db.pool.query<{ data: Record<string, unknown> }>(
    "SELECT data FROM events WHERE type = 'DirectoryChangeNotRecorded'",
  );
  t.equal(noted.rowCount, 1, "noted once, though capture ran twice");
  t.match(noted.rows[0]!.data, {
    source: "accesslog",
    dn: `uid=poison,${PEOPLE}`,
    changeId: /^\d{14}/,
    error: { code: "ANNAL_CAPTURE_CHANGE_REFUSED", sqlstate: "P0001" },
  });
  t.ok(
    text.some((line) => line.includes("could not be recorded")),
    "the failure is logged",
  );
  t.notOk(
    text.some((line) => line.includes(secret)),
    "no value reaches a log line",
  );
  const tables = await f.db.pool.query<{ row: string }>("SELECT e::text AS row FROM events e");
  t.notOk(
    tables.rows.some((r) => r.row.includes(secret)),
    "nor the log",
  );
});

t.test("a PostgreSQL error's detail and where never reach a log line", async (t) => {
  const secret = `s3cret-${Math.random().toString(36).slice(2)}`;
  const f = await captureFixture(t);
  const { log, text } = capturedLogger();
  const error = await f.db.pool
    .query(`DO $$ BEGIN RAISE EXCEPTION 'refused' USING DETAIL = '${secret}'; END $$`)
    .catch((e: unknown) => e);
  t.match(error, { detail: secret, where: String }, "pg reports the detail");
  log.error({ err: error }, "a database error");
  t.ok(text.some((line) => line.includes("a database error")));
  t.notOk(text.some((line) => line.includes(secret)));
});
