import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { accessProjection } from "../../projections/index.ts";
import { chainBatch, runRetention } from "../../src/audit/index.ts";
import { activateAccessConfiguration } from "../../src/auth/index.ts";
import { recordPrincipals, upsertPerson } from "../../src/auth/persons.ts";
import { simulateAccessCommand } from "../../src/cli/commands/simulate.ts";
import { withTransaction } from "../../src/db/index.ts";
import { replayProjection } from "../../src/projector/index.ts";
import { loadAccessFile, simulateAccess } from "../../src/simulate/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { capturedOutput } from "../cli/support.ts";
import { EntryHistory } from "../support/entries.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * `annal simulate access`: an Access Configuration that takes `write` from the operators,
 * compared at a moment with the one active then: olga (an operator) would have lost `write`,
 * her GraphQL directory write of that day would have been refused, and nothing is written.
 */

t.setTimeout(120_000);

const ENGINEERING = "cn=engineering,ou=groups,dc=example,dc=org";
const OPERATORS = "cn=annal-operators,ou=roles,dc=example,dc=org";

t.test("who would have lost write, and which write would have been refused", async (t) => {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  await activateAccessConfiguration(db.pool, store, {
    grants: { read: [ENGINEERING], write: [OPERATORS] },
    activate: { version: 1, by: "the test" },
  });
  const person = async (name: string, principals: string[]) => {
    const dn = `uid=${name},ou=people,dc=example,dc=org`;
    return withTransaction(db.pool, async (tx) => {
      const account = await upsertPerson(tx, store, {
        origin: "directory",
        subject: dn,
        name,
        displayName: null,
        dn,
      });
      await recordPrincipals(
        tx,
        store,
        account.id,
        { principals, count: principals.length },
        7000,
        "sign-in",
      );
      return account;
    });
  };
  const olga = await person("olga", [ENGINEERING, OPERATORS]);
  await person("dora", [ENGINEERING]);
  await store.appendToStream(`graphql-writes-${olga.id}`, [
    {
      type: "DirectoryWriteRequested",
      data: {
        requestId: randomUUID(),
        operation: "modify",
        dn: "cn=on-call,ou=groups,dc=example,dc=org",
        newDN: null,
        attributes: ["member"],
        actor: "uid=olga,ou=people,dc=example,dc=org",
        account: { id: olga.id, name: "olga" },
      },
    },
  ]);
  await replayProjection({ pool: db.pool, projection: accessProjection });
  const at = (await db.pool.query<{ now: Date }>("SELECT clock_timestamp() AS now")).rows[0]!.now;

  const file = path.join(t.testdir(), "next.toml");
  writeFileSync(
    file,
    `[authorization.grants]\nread = ["${ENGINEERING}"]\nauditor = ["${OPERATORS}"]\n`,
  );
  const events = async () =>
    Number((await db.pool.query("SELECT count(*) AS n FROM events")).rows[0].n);
  const before = await events();

  const report = await simulateAccess(db.pool, {
    file,
    grants: await loadAccessFile(file),
    at,
  });
  t.match(report.active, { version: 1 });
  t.same(report.changes, [
    {
      account: { id: olga.id, name: "olga", kind: "person" },
      gained: ["auditor"],
      lost: ["write"],
    },
  ]);
  t.equal(report.commandsChecked, 1);
  t.match(report.refused, [
    {
      command: "directory write (modify cn=on-call,ou=groups,dc=example,dc=org)",
      account: { id: olga.id, name: "olga" },
      needs: ["write"],
      wouldHold: ["auditor", "read"],
    },
  ]);

  const { out, output } = capturedOutput();
  const code = await simulateAccessCommand(
    { file, at: at.toISOString() },
    {
      clock: { now: new Date(), timeZone: "UTC" },
      open: async () => ({ pool: db.pool, close: async () => {} }),
    },
    output,
  );
  t.equal(code, 0);
  const text = out.join("\n");
  t.match(text, /person:olga {2}\+auditor -write/);
  t.match(text, /1 needed an access function, 1 would have been refused/);
  t.match(
    text,
    /olga {2}directory write \(modify cn=on-call[^)]*\) {2}needs write, would hold auditor, read/,
  );
  t.equal(await events(), before, "nothing is written to the log");
});

t.test("the commands' window stops at the workflow horizon of a retention run", async (t) => {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  const history = new EntryHistory(db.pool, store);
  const day = (n: number, hour = 9) => new Date(Date.UTC(2026, 10, n, hour));
  const entry = (uid: string) => ({
    dn: `uid=${uid},ou=people,dc=example,dc=org`,
    type: "user",
    attributes: { objectClass: ["inetOrgPerson"], uid: [uid], cn: [uid], sn: [uid] },
  });
  await history.add(entry("alice"), { at: day(1) });
  await history.add(entry("bob"), { at: day(12) });
  while ((await chainBatch(db.pool, 100)) > 0);
  await runRetention(db.pool, { horizon: day(10), workflowHorizon: day(20) });
  const file = path.join(t.testdir(), "next.toml");
  writeFileSync(file, `[authorization.grants]\nread = ["${ENGINEERING}"]\n`);
  const grants = await loadAccessFile(file);

  await t.rejects(
    simulateAccess(db.pool, {
      file,
      grants,
      at: day(21),
      window: { from: day(19), to: day(21) },
    }),
    {
      code: "ANNAL_BEFORE_RETENTION",
      message: `--from ${day(19).toISOString()} is before the retention horizon ${day(20).toISOString()}: the log keeps no history before it`,
      details: { parameter: "--from", horizon: day(20).toISOString() },
    },
    "a window given from before the horizon",
  );
  await t.rejects(
    simulateAccess(db.pool, { file, grants, at: day(19) }),
    { code: "ANNAL_BEFORE_RETENTION", details: { parameter: "--at" } },
    "a moment whose whole day lies before it",
  );
  await replayProjection({ pool: db.pool, projection: accessProjection });
  const report = await simulateAccess(db.pool, { file, grants, at: day(20, 12) });
  t.same(
    report.window,
    { from: day(20).toISOString(), to: new Date(Date.UTC(2026, 10, 21) - 1).toISOString() },
    "the moment's day, from the horizon on",
  );
});
