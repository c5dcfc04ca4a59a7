import t from "tap";
import { modifiedAt, modifiedSince, pollTime } from "../../src/capture/modified-since.ts";
import { renderFilter } from "../../src/directory/index.ts";

t.test("the poll filter's time has a fraction of zero, the form every server reads", async (t) => {
  t.equal(
    renderFilter(modifiedSince(new Date("2026-11-22T04:35:00Z"))),
    "(modifyTimestamp>=20261122043500.0Z)",
  );
  t.equal(
    renderFilter(modifiedSince(new Date("2026-11-22T04:35:00.999Z"))),
    "(modifyTimestamp>=20261122043500.0Z)",
    "a finer moment is cut down to its second, which is then read again",
  );
});

t.test("a poll checkpoint is written to the whole second, with a fraction", async (t) => {
  t.equal(pollTime(new Date("2026-01-02T03:04:05.678Z")), "20260102030405.0Z");
});

t.test("an entry's modifyTimestamp is read whatever the server's spelling", async (t) => {
  const at = new Date("2026-11-22T04:35:00Z");
  for (const [name, value] of [
    ["modifyTimestamp", "20261122043500Z"],
    ["modifyTimeStamp", "20261122043500.0Z"],
    ["modifytimestamp", Buffer.from("20261122043500Z")],
  ] as const) {
    const entry = { dn: "uid=a", attributes: { [name]: [value] as string[] | Buffer[] } };
    t.same(modifiedAt(entry), at, name);
  }
  t.equal(modifiedAt({ dn: "uid=a", attributes: { cn: ["a"] } }), undefined, "none returned");
});
