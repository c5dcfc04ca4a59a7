import t from "tap";
import { replayProjection } from "../../src/projector/index.ts";
import { allProjections } from "../../projections/index.ts";
import { captureFixture } from "../support/capture.ts";

const ldif = Array.from(
  { length: 30 },
  (_, i) => `dn: uid=p${i},ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: p${i}
cn: Person ${i}
sn: Number${i}
description: en~Person ${i}|de~Person ${i}
`,
).join("\n");

async function dump(pool: import("../../src/db/index.ts").Pool) {
  const out: Record<string, unknown[]> = {};
  for (const [schema, table, order] of [
    ["projection_entries", "entries", "entry_uuid"],
    ["projection_entries", "entry_values", "entry_uuid, attribute, ordinal"],
    ["projection_entries", "entry_value_counts", "type, attribute"],
    ["projection_entry_versions", "entry_versions", "entry_uuid, version"],
    ["projection_changes", "changes", "position"],
  ] as const) {
    out[table] = (await pool.query(`SELECT * FROM ${schema}.${table} ORDER BY ${order}`)).rows;
  }
  return out;
}

t.test("the first start imports a snapshot of every entry with its type", async (t) => {
  const f = await captureFixture(t, { seedLdif: ldif });
  await f.sync();
  const snapshots = await f.db.pool.query(
    "SELECT count(*)::int AS n FROM events WHERE type = 'EntrySnapshot'",
  );
  t.equal(snapshots.rows[0].n, 34, "30 people, the base and its three ous");
  const users = await f.db.pool.query(
    "SELECT count(*)::int AS n FROM projection_entries.entries WHERE type = 'user'",
  );
  t.equal(users.rows[0].n, 30);
  const one = await f.db.pool.query(
    "SELECT attributes, operational FROM projection_entries.entries WHERE dn = 'uid=p3,ou=people,dc=example,dc=org'",
  );
  t.same(one.rows[0].attributes.description, ["en~Person 3|de~Person 3"]);
  t.ok(one.rows[0].operational.entryUUID, "operational attributes are kept apart");
  t.notOk(one.rows[0].attributes.entryUUID);
});

t.test("replaying every projection gives identical tables", async (t) => {
  const f = await captureFixture(t, { seedLdif: ldif });
  await f.sync();
  for (let i = 0; i < 10; i++) {
    await f.directory.modify(`uid=p${i},ou=people,dc=example,dc=org`, [
      { operation: "replace", attribute: "title", values: `T${i}` },
    ]);
  }
  await f.directory.modifyDN("uid=p1,ou=people,dc=example,dc=org", "uid=p1b");
  await f.directory.delete("uid=p2,ou=people,dc=example,dc=org");
  await f.sync();
  const incremental = await dump(f.db.pool);
  t.ok(incremental.changes!.length >= 12);
  for (const projection of allProjections) await replayProjection({ pool: f.db.pool, projection });
  t.same(await dump(f.db.pool), incremental);
});
