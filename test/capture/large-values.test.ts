import { applyPatch, type Operation } from "rfc6902";
import t from "tap";
import { captureFromAccesslog } from "../../src/capture/index.ts";
import {
  applyChanges,
  largeArrayPatch,
  patchBetween,
  type EntryState,
} from "../../src/events/index.ts";
import { captureFixture } from "../support/capture.ts";
import { longestJsonDuring } from "../support/loop-holds.ts";
import { waitForProjection } from "../../src/projector/index.ts";
import { allProjections } from "../../projections/index.ts";

const PEOPLE = "ou=people,dc=example,dc=org";
const GROUP = "cn=everyone,ou=groups,dc=example,dc=org";

const state = (attributes: Record<string, string[]>) =>
  ({ dn: GROUP, type: "group", attributes, operational: {} }) as unknown as EntryState;

/** `before` with `patch` applied, as a reader of the change feed applies it. */
function applied(before: Record<string, string[]>, patch: Operation[]) {
  const document = structuredClone(before);
  const results = applyPatch(document, patch);
  return { document, errors: results.filter((result) => result !== null) };
}

t.test("the patch of a large attribute turns the one state into the other", async (t) => {
  const members = (n: number, from = 0) =>
    Array.from({ length: n }, (_, i) => `uid=m${from + i},${PEOPLE}`);
  const big = members(100_000);
  const cases: { what: string; before: string[]; after: string[]; ops?: number }[] = [
    { what: "one member removed", before: big, after: big.filter((_, i) => i !== 500), ops: 1 },
    {
      what: "one member added in the middle",
      before: big,
      after: [...big.slice(0, 7), "uid=new", ...big.slice(7)],
      ops: 1,
    },
    { what: "one added at the end", before: big, after: [...big, "uid=new"], ops: 1 },
    {
      what: "scattered removals and additions",
      before: big,
      after: big.flatMap((dn, i) =>
        i % 1000 === 0 ? [] : i % 777 === 0 ? [dn, `new-${i}`] : [dn],
      ),
    },
    { what: "every member replaced", before: members(3000), after: members(3000, 5000) },
    {
      what: "reordered: replaced whole",
      before: members(3000),
      after: members(3000).reverse(),
      ops: 1,
    },
  ];
  for (const { what, before, after, ops } of cases) {
    const patch = patchBetween(
      state({ member: before, cn: ["everyone"] }),
      state({ member: after, cn: ["all"] }),
    );
    const { document, errors } = applied({ member: before, cn: ["everyone"] }, patch);
    t.same(errors, [], `${what}: every operation applies`);
    t.same(document, { member: after, cn: ["all"] }, `${what}: the patch makes the new state`);
    if (ops !== undefined) {
      t.equal(
        patch.filter((op) => op.path.startsWith("/member")).length,
        ops,
        `${what}: ${ops} operation(s)`,
      );
    }
  }
  // Small attributes keep rfc6902's own patch (a replace of a one-valued title, say).
  t.same(patchBetween(state({ title: ["Engineer"] }), state({ title: ["Architect"] })), [
    { op: "replace", path: "/title/0", value: "Architect" },
  ]);
  // A value twice: what both ends share stays, the rest is removed by its place, or the
  // attribute replaced whole where the values between are not a set.
  t.same(largeArrayPatch("/a~1b", ["x", "x"], ["x"]), [{ op: "remove", path: "/a~1b/1" }]);
  t.same(largeArrayPatch("/a~1b", ["y", "x", "x", "y"], ["y", "x", "y"]), [
    { op: "remove", path: "/a~1b/2" },
  ]);
  t.same(largeArrayPatch("/a~1b", ["y", "x", "z", "x", "y"], ["y", "z", "y"]), [
    { op: "replace", path: "/a~1b", value: ["y", "z", "y"] },
  ]);
  for (const [before, after] of [
    [["x", "x"], ["x"]],
    [
      ["y", "x", "x", "y"],
      ["y", "x", "y"],
    ],
    [
      ["a", "b", "c", "d", "e"],
      ["a", "c", "f", "e"],
    ],
    [
      ["a", "b"],
      ["a", "b", "c", "a"],
    ],
  ]) {
    const { document, errors } = applied(
      { "a/b": before! },
      largeArrayPatch("/a~1b", before!, after!),
    );
    t.same([document, errors], [{ "a/b": after }, []], `${before} to ${after}`);
  }
});

t.test("modify semantics on a large attribute compare each value once", async (t) => {
  const big = Array.from({ length: 100_000 }, (_, i) => `m${i}`);
  const added = Array.from({ length: 100_000 }, (_, i) => `n${i}`);
  const started = performance.now();
  const after = applyChanges({ member: big }, [
    { operation: "add", attribute: "member", values: [...added, "m1"] },
    { operation: "delete", attribute: "member", values: big.slice(0, 50_000) },
  ]);
  const ms = performance.now() - started;
  t.equal(after.member!.length, 150_000);
  t.equal(after.member![0], "m50000");
  // With includes() it was 10^10 comparisons; with sets, well under a second even when busy.
  t.ok(ms < 5000, `applied in ${ms.toFixed(0)} ms`);
});

t.test("a one-member change to a group of 100,000 members is recorded", async (t) => {
  const f = await captureFixture(t);
  await f.sync();
  const members = Array.from({ length: 100_000 }, (_, i) => `uid=m${i},${PEOPLE}`);
  await f.directory.add(GROUP, { objectClass: ["groupOfNames"], cn: "everyone", member: members });
  await captureFromAccesslog(f.context);
  await f.directory.modify(GROUP, [
    { operation: "delete", attribute: "member", values: [members[1]!] },
  ]);
  // Recorded, and applied by every projection, without its JSON made or parsed whole: the
  // change's event is 11 MB of it, which capture made in one piece and read back, and the
  // projector parsed in one piece, each holding the event loop tens of milliseconds. Counted
  // in characters, not timed: the figure does not depend on how busy the machine is.
  const { made, parsed } = await longestJsonDuring(async () => {
    t.equal((await captureFromAccesslog(f.context)).recorded, 1, "recorded");
    const head = await f.store.head();
    for (const projection of allProjections) {
      await waitForProjection(f.db.pool, projection.name, head, 300_000);
    }
  });
  t.ok(made < 1_000_000, `no JSON text made whole (the longest: ${made} characters)`);
  t.ok(parsed < 1_000_000, `no JSON text parsed whole (the longest: ${parsed} characters)`);
  const failed = await f.db.pool.query(
    "SELECT 1 FROM events WHERE type = 'DirectoryChangeNotRecorded'",
  );
  t.equal(failed.rowCount, 0, "not noted as a change capture could not record");
  const modified = await f.db.pool.query<{ patch: unknown }>(
    "SELECT data->'patch' AS patch FROM events WHERE type = 'EntryModified' AND data->>'dn' = $1",
    [GROUP],
  );
  t.same(
    modified.rows[0]?.patch,
    [{ op: "remove", path: "/member/1" }],
    "one member removed, by its place",
  );
});
