import t from "tap";
import { feed } from "../support/history.ts";
import { captureFixture, person } from "../support/capture.ts";
import { nextSecond } from "../support/clock.ts";
import { eventually } from "../support/eventually.ts";
import { armPausePoint } from "../support/pause-points.ts";
import { captureOnce } from "../../src/capture/index.ts";

t.test(
  "polling records adds, modifies and renames as observed changes without an actor",
  async (t) => {
    const f = await captureFixture(t, { source: "poll" });
    await f.directory.add("uid=before,ou=people,dc=example,dc=org", person("before"));
    await f.sync(); // first start: the import sees "before" as a snapshot, not as a change
    t.same(await feed(f.db.pool), [], "the import records snapshots, no changes");
    // modifyTimestamp has whole seconds: each round of changes gets a second of its own.
    await nextSecond();
    await f.directory.add("uid=bob,ou=people,dc=example,dc=org", person("bob"));
    await f.directory.modify("uid=before,ou=people,dc=example,dc=org", [
      { operation: "replace", attribute: "title", values: "Polled" },
    ]);
    await f.sync();
    await nextSecond();
    await f.directory.modifyDN("uid=bob,ou=people,dc=example,dc=org", "uid=robert");
    await f.sync();
    const changes = await feed(f.db.pool);
    t.same(changes.map((c) => [c.change_type, c.dn]).sort(), [
      ["add", "uid=bob,ou=people,dc=example,dc=org"],
      ["modify", "uid=before,ou=people,dc=example,dc=org"],
      ["modrdn", "uid=robert,ou=people,dc=example,dc=org"],
    ]);
    t.ok(
      changes.every((c) => c.actor === null),
      "polling knows no actor",
    );
    const modify = changes.find((c) => c.change_type === "modify")!;
    t.same(modify.patch, [{ op: "add", path: "/title", value: ["Polled"] }]);
    const observed = await f.db.pool.query(
      "SELECT bool_and(observed) AS all FROM projection_changes.changes",
    );
    t.equal(observed.rows[0].all, true, "marked as observed");

    t.equal(await f.sync(), 0, "polling again finds nothing new");
  },
);

t.test(
  "a full reconciliation records deletes, and changes made while annal was stopped",
  async (t) => {
    const f = await captureFixture(t, { source: "poll" });
    await f.directory.add("uid=gone,ou=people,dc=example,dc=org", person("gone"));
    await f.directory.add("uid=stays,ou=people,dc=example,dc=org", person("stays"));
    await f.sync();
    // annal is stopped; the directory changes.
    await f.directory.delete("uid=gone,ou=people,dc=example,dc=org");
    await nextSecond();
    await f.directory.modify("uid=stays,ou=people,dc=example,dc=org", [
      { operation: "replace", attribute: "title", values: "Still here" },
    ]);
    await f.sync({ reconcile: true });
    const changes = await feed(f.db.pool);
    t.same(changes.map((c) => [c.change_type, c.dn]).sort(), [
      ["delete", "uid=gone,ou=people,dc=example,dc=org"],
      ["modify", "uid=stays,ou=people,dc=example,dc=org"],
    ]);
    t.equal(await f.sync({ reconcile: true }), 0, "a second reconciliation finds nothing");
  },
);

t.test(
  "poll passes run one at a time: a pass that read an entry earlier cannot record over a " +
    "later pass's read of it",
  async (t) => {
    const f = await captureFixture(t, { source: "poll" });
    const dn = "uid=twice,ou=people,dc=example,dc=org";
    await f.directory.add(dn, person("twice"));
    await f.sync();
    await nextSecond();
    await f.directory.modify(dn, [{ operation: "replace", attribute: "title", values: "One" }]);
    // The first pass reads "One", and stands there.
    const point = armPausePoint(t, "capture.poll.pageRead", { subject: "poll" });
    const first = captureOnce(f.context, "poll");
    await point.reached();
    await nextSecond();
    await f.directory.modify(dn, [{ operation: "replace", attribute: "title", values: "Two" }]);
    // The second waits for the first's lock...
    const second = captureOnce(f.context, "poll");
    await eventually(
      async () =>
        (
          await f.db.pool.query(
            `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                AND objid = hashtext('annal:capture:poll')::oid`,
          )
        ).rowCount === 1,
      { what: "the second pass waits for the first" },
    );
    // ...and reads for itself once the first has recorded what it read.
    point.release();
    await first;
    await second;
    await f.sync();
    const changes = await feed(f.db.pool);
    t.same(
      changes.map((c) => c.patch),
      [
        [{ op: "add", path: "/title", value: ["One"] }],
        [{ op: "replace", path: "/title/0", value: "Two" }],
      ],
    );
    const entry = await f.db.pool.query(
      "SELECT attributes->'title' AS title FROM projection_entries.entries WHERE dn = $1",
      [dn],
    );
    t.same(entry.rows[0].title, ["Two"]);
  },
);
