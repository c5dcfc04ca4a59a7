import fc from "fast-check";
import t from "tap";
import { withTransaction } from "../../src/db/index.ts";
import { appendToStreams, readStream } from "../../src/store/index.ts";
import { jsonText } from "../../src/store/json-text.ts";
import { testDatabase } from "../support/postgres.ts";

/** The text `jsonText` gives, joined, and the bytes it says it has. */
function whole(value: unknown): { text: string; bytes: number; pieces: number } {
  const made = jsonText(value);
  if (typeof made === "string") return { text: made, bytes: Buffer.byteLength(made), pieces: 1 };
  const pieces = [...made.pieces()];
  return { text: pieces.join(""), bytes: made.bytes, pieces: pieces.length };
}

const members = (n: number) =>
  Array.from({ length: n }, (_, i) => `uid=m${i},ou=people,dc=example,dc=org`);

t.test("a value of many elements is made in pieces, the same JSON as JSON.stringify", (t) => {
  const snapshot = {
    entryUUID: "0e6c",
    reason: "import",
    skipped: undefined,
    state: {
      dn: "cn=everyone,ou=groups,dc=example,dc=org",
      type: null,
      attributes: { cn: ["everyone"], member: members(30_000), description: ['Grüße 😀 "q"\n'] },
      nested: [[1, 2], { at: new Date(0), f: () => 1 }, undefined, [members(3)]],
    },
  };
  const made = whole(snapshot);
  t.ok(made.pieces > 10, `in pieces (${made.pieces})`);
  t.equal(made.text, JSON.stringify(snapshot));
  t.equal(made.bytes, Buffer.byteLength(made.text), "its length in bytes");
  t.end();
});

t.test("any JSON value, large or small, gives JSON.stringify's text", (t) => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.nat(12_000), (value, padding) => {
      const wrapped = { value, padding: Array.from({ length: padding }, (_, i) => i) };
      t.equal(whole(wrapped).text, JSON.stringify(wrapped));
      t.equal(whole(value).text, JSON.stringify(value));
    }),
    { numRuns: 40 },
  );
  t.end();
});

t.test("a huge event among small ones is stored as given", async (t) => {
  const { pool } = await testDatabase(t);
  const huge = { members: members(25_000), note: "Grüße 😀" };
  await withTransaction(pool, (tx) =>
    appendToStreams(tx, [
      { streamId: "a", events: [{ type: "A", data: { n: 1 } }] },
      { streamId: "big", events: [{ type: "A", data: huge, metadata: { m: "ü" } }] },
      { streamId: "b", events: [{ type: "A", data: { n: 2 } }] },
    ]),
  );
  t.same((await readStream(pool, "big"))[0]?.data, huge);
  t.same((await readStream(pool, "big"))[0]?.metadata, { m: "ü" });
  t.same((await readStream(pool, "a"))[0]?.data, { n: 1 });
  t.same((await readStream(pool, "b"))[0]?.data, { n: 2 });
  // First in the COPY, the huge row also carries the stream's header.
  await withTransaction(pool, (tx) =>
    appendToStreams(tx, [{ streamId: "c", events: [{ type: "A", data: huge }] }]),
  );
  t.same((await readStream(pool, "c"))[0]?.data, huge);
});
