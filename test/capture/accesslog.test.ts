import t from "tap";
import {
  captureFromAccesslog,
  causedWrites,
  recordWriteIntent,
  writeFingerprint,
} from "../../src/capture/index.ts";
import { entryAtTime, feed } from "../support/history.ts";
import { captureFixture, person } from "../support/capture.ts";
import { nextSecond } from "../support/clock.ts";

const ALICE = "uid=alice,ou=people,dc=example,dc=org";
const BOB = "uid=bob,ou=people,dc=example,dc=org";

t.test(
  "add, modify, rename and delete each appear in the feed with patch, type and actor",
  async (t) => {
    const f = await captureFixture(t);
    await f.sync(); // the first start imports (the seed: the ous)
    await f.directory.add(ALICE, person("alice", { mail: "alice@example.org" }));
    await f.directory.modify(ALICE, [
      { operation: "replace", attribute: "sn", values: "Liddell" },
      { operation: "add", attribute: "mail", values: "a.liddell@example.org" },
      { operation: "add", attribute: "telephoneNumber", values: ["+1 555 0100", "+1 555 0101"] },
    ]);
    await f.directory.modify(
      ALICE,
      [{ operation: "delete", attribute: "telephoneNumber", values: "+1 555 0100" }],
      { as: "uid=operator,ou=people,dc=example,dc=org" },
    );
    await f.directory.modifyDN(ALICE, "uid=alice2");
    await f.directory.delete("uid=alice2,ou=people,dc=example,dc=org");
    await f.sync();

    const changes = await feed(f.db.pool);
    t.same(
      changes.map((c) => [c.change_type, c.dn, c.type]),
      [
        ["add", ALICE, "user"],
        ["modify", ALICE, "user"],
        ["modify", ALICE, "user"],
        ["modrdn", "uid=alice2,ou=people,dc=example,dc=org", "user"],
        ["delete", "uid=alice2,ou=people,dc=example,dc=org", "user"],
      ],
    );
    const [add, modify, proxied, rename, del] = changes;
    t.equal(add!.actor, f.slapd.bindDN, "the actor is who bound");
    t.equal(proxied!.actor, "uid=operator,ou=people,dc=example,dc=org", "or who was proxied");
    t.same(add!.attributes.includes("mail") && add!.attributes.includes("cn"), true);
    const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : 1);
    t.same(
      [...modify!.patch].sort(byPath),
      [
        { op: "add", path: "/mail/-", value: "a.liddell@example.org" },
        { op: "replace", path: "/sn/0", value: "Liddell" },
        { op: "add", path: "/telephoneNumber", value: ["+1 555 0100", "+1 555 0101"] },
      ],
      "modify's patch names the values it changed",
    );
    t.same([...modify!.attributes].sort(), ["mail", "sn", "telephoneNumber"]);
    t.same(proxied!.patch, [{ op: "remove", path: "/telephoneNumber/0" }]);
    t.equal(rename!.old_dn, ALICE);
    t.ok(
      rename!.patch.some(
        (p: { path: string; value?: unknown }) =>
          p.path.startsWith("/uid") && JSON.stringify(p).includes("alice2"),
      ),
      "the rename's patch changes the RDN attribute",
    );
    t.same(del!.patch.length > 0, true);
    const entries = await f.db.pool.query(
      "SELECT dn FROM projection_entries.entries WHERE dn LIKE 'uid=%'",
    );
    t.equal(entries.rowCount, 0, "the deleted entry is gone from the current entries");
  },
);

t.test("the state at a moment between two modifications is the earlier state", async (t) => {
  const f = await captureFixture(t);
  await f.sync();
  await f.directory.add(ALICE, person("alice", { title: "Engineer" }));
  await f.sync();
  // slapd stamps changes with whole seconds (reqStart's fraction is a counter): keep the
  // moment asked about in a second of its own.
  const between = await nextSecond();
  await nextSecond(between);
  await f.directory.modify(ALICE, [{ operation: "replace", attribute: "title", values: "Lead" }]);
  await f.sync();
  const [{ entry_uuid: uuid }] = (await feed(f.db.pool)).slice(0, 1);
  const then = await entryAtTime(f.db.pool, uuid, between);
  const now = await entryAtTime(f.db.pool, uuid, new Date());
  t.same(then?.attributes.title, ["Engineer"]);
  t.same(now?.attributes.title, ["Lead"]);
  t.equal(await entryAtTime(f.db.pool, uuid, new Date("2000-01-01")), undefined, "not there yet");
});

t.test("a renamed entry keeps its history under its new DN", async (t) => {
  const f = await captureFixture(t);
  await f.sync();
  await f.directory.add(ALICE, person("alice"));
  await f.directory.modify(ALICE, [{ operation: "replace", attribute: "title", values: "A" }]);
  await f.directory.modifyDN(ALICE, "uid=alice.liddell");
  await f.directory.modify("uid=alice.liddell,ou=people,dc=example,dc=org", [
    { operation: "replace", attribute: "title", values: "B" },
  ]);
  await f.sync();
  const current = await f.db.pool.query(
    "SELECT entry_uuid, dn FROM projection_entries.entries WHERE dn LIKE 'uid=alice%'",
  );
  t.equal(current.rows[0].dn, "uid=alice.liddell,ou=people,dc=example,dc=org");
  const history = await feed(f.db.pool, current.rows[0].entry_uuid);
  t.same(
    history.map((c) => c.change_type),
    ["add", "modify", "modrdn", "modify"],
    "one stream, from the add under the old DN to the change under the new one",
  );
});

t.test("capture restarted mid-stream, or over the same range, records no duplicate", async (t) => {
  const f = await captureFixture(t);
  await f.sync();
  for (let i = 0; i < 5; i++)
    await f.directory.add(`uid=p${i},ou=people,dc=example,dc=org`, person(`p${i}`));
  await f.sync();
  const first = await f.db.pool.query("SELECT count(*)::int AS n FROM events");
  // Rewind the checkpoint as if the run had stopped before committing it.
  await f.db.pool.query(
    "UPDATE capture_checkpoints SET position = '19700101000000.000000Z' WHERE source = 'accesslog'",
  );
  const again = await captureFromAccesslog(f.context);
  t.equal(again.recorded, 0, "reading the same range again records nothing");
  // Two runs at once.
  await f.db.pool.query(
    "UPDATE capture_checkpoints SET position = '19700101000000.000000Z' WHERE source = 'accesslog'",
  );
  const both = await Promise.all([
    captureFromAccesslog(f.context),
    captureFromAccesslog(f.context),
  ]);
  t.equal(both[0].recorded + both[1].recorded, 0);
  const after = await f.db.pool.query("SELECT count(*)::int AS n FROM events");
  t.equal(after.rows[0].n, first.rows[0].n);
});

t.test("changes made while annal was stopped are captured at the next start", async (t) => {
  const f = await captureFixture(t);
  await f.sync();
  await f.directory.add(ALICE, person("alice"));
  await f.directory.modify(ALICE, [{ operation: "replace", attribute: "title", values: "Away" }]);
  // annal is "stopped": nothing ran. Now it starts again.
  const recorded = await f.sync();
  t.equal(recorded, 2);
  t.same(
    (await feed(f.db.pool)).map((c) => c.change_type),
    ["add", "modify"],
  );
});

t.test("redacted attributes never reach any table", async (t) => {
  const secret = "s3cret-Value-" + Math.random().toString(36).slice(2);
  const f = await captureFixture(t, { redact: ["employeeNumber"] });
  await f.sync();
  await f.directory.add(
    ALICE,
    person("alice", { userPassword: secret, employeeNumber: `${secret}-42` }),
  );
  await f.directory.modify(ALICE, [
    { operation: "replace", attribute: "userPassword", values: `${secret}-2` },
    { operation: "replace", attribute: "title", values: "Visible" },
  ]);
  await f.sync();
  const tables = await f.db.pool.query<{ schema: string; name: string }>(
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'`,
  );
  for (const { schema, name } of tables.rows) {
    const rows = await f.db.pool.query(`SELECT t::text AS row FROM "${schema}"."${name}" t`);
    t.notOk(
      rows.rows.some((r) => r.row.includes(secret)),
      `${schema}.${name} holds no redacted value`,
    );
  }
  const modify = (await feed(f.db.pool)).find((c) => c.change_type === "modify")!;
  t.ok(modify.attributes.includes("userPassword"), "the change says userPassword changed");
  t.ok(modify.attributes.includes("title"));
});

t.test("a write annal makes because of an event is linked to it in the change feed", async (t) => {
  const f = await captureFixture(t);
  await f.sync();
  await f.directory.add(ALICE, person("alice"));
  const writes = causedWrites(f.directory, {
    pool: f.db.pool,
    boundAs: f.slapd.bindDN,
    cause: { causationId: "event-123", correlationId: "hr-42" },
  });
  await writes.modify(ALICE, [{ operation: "replace", attribute: "title", values: "From HR" }]);
  await writes.modify(ALICE, [{ operation: "replace", attribute: "title", values: "As Bob" }], {
    as: "uid=bob,ou=people,dc=example,dc=org",
  });
  await f.directory.modify(ALICE, [{ operation: "replace", attribute: "title", values: "Manual" }]);
  await f.sync();
  const rows = await f.db.pool.query(
    `SELECT actor, causation_id, correlation_id FROM projection_changes.changes ORDER BY position`,
  );
  t.same(
    rows.rows.map((r) => [r.actor, r.causation_id, r.correlation_id]),
    [
      [f.slapd.bindDN, null, null],
      [f.slapd.bindDN, "event-123", "hr-42"],
      ["uid=bob,ou=people,dc=example,dc=org", "event-123", "hr-42"],
      [f.slapd.bindDN, null, null],
    ],
    "each noted write explains exactly one change; a write without a note has no cause",
  );
  const left = await f.db.pool.query("SELECT count(*)::int AS n FROM directory_write_intents");
  t.equal(left.rows[0].n, 0, "every note was used");
});

t.test(
  "a write of the same shape to the same entry by the same account does not take another's note: the values tell them apart",
  async (t) => {
    const f = await captureFixture(t);
    await f.sync();
    const group = "cn=on-call,ou=groups,dc=example,dc=org";
    await f.directory.add(ALICE, person("alice"));
    await f.directory.add(BOB, person("bob"));
    await f.directory.add(group, { objectClass: ["groupOfNames"], cn: "on-call", member: ALICE });
    // annal notes that it is about to add bob (a workflow's step)...
    const addBob = [{ operation: "add", attribute: "member", values: [BOB] }] as const;
    await recordWriteIntent(f.db.pool, {
      dn: group,
      actor: f.slapd.bindDN,
      fingerprint: writeFingerprint({ kind: "modify", changes: addBob }),
      causationId: "step-7",
    });
    // ...and before it does, an administrator bound as annal's own account adds carol.
    await f.directory.modify(group, [
      { operation: "add", attribute: "member", values: "uid=carol,ou=people,dc=example,dc=org" },
    ]);
    await f.directory.modify(group, [...addBob]);
    await f.sync();
    const rows = await f.db.pool.query(
      `SELECT causation_id FROM projection_changes.changes WHERE dn = $1 AND change_type = 'modify'
        ORDER BY position`,
      [group],
    );
    t.same(
      rows.rows.map((r) => r.causation_id),
      [null, "step-7"],
      "carol's add has no cause; bob's is the step's",
    );
  },
);

t.test("a pass that finds nothing new writes nothing and locks nothing", async (t) => {
  const f = await captureFixture(t);
  await f.sync();
  await f.directory.add(ALICE, person("alice"));
  await f.sync();
  // The search `reqEnd >= checkpoint` finds the record the checkpoint names again. Recording
  // or locking the checkpoint's row (FOR UPDATE) would give it a new xmin or xmax; the xids
  // of the whole server, which tests in parallel share, say nothing of this database.
  const checkpointRow = async () =>
    (
      await f.db.pool.query<{ xmin: string; xmax: string }>(
        "SELECT xmin::text, xmax::text FROM capture_checkpoints WHERE source = 'accesslog'",
      )
    ).rows[0];
  const events = async () =>
    (await f.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM events")).rows[0]!.n;
  const before = { row: await checkpointRow(), events: await events() };
  for (let i = 0; i < 3; i++) t.equal((await captureFromAccesslog(f.context)).recorded, 0);
  t.same(await checkpointRow(), before.row, "the checkpoint's row was neither written nor locked");
  t.equal(await events(), before.events, "no event was appended");
});
