import t from "tap";
import {
  canonicalIdentity,
  entryIdentity,
  guidText,
  identityFilter,
  renderFilter,
} from "../../src/directory/index.ts";

t.test("an entryUUID is its own identity, in lower case", async (t) => {
  t.equal(
    canonicalIdentity("entryUUID", "6E2D1C4A-9F0B-4C3E-8A51-0D2B7E6F1A93"),
    "6e2d1c4a-9f0b-4c3e-8a51-0d2b7e6f1a93",
  );
  t.equal(canonicalIdentity("entryUUID", "not-a-uuid"), undefined);
});

t.test("389's nsUniqueId (8-8-8-8) is the same 128 bits as UUID text (8-4-4-4-12)", async (t) => {
  t.equal(
    canonicalIdentity("nsUniqueId", "66446001-1dd211b2-800000a4-3c1b6c6c"),
    "66446001-1dd2-11b2-8000-00a43c1b6c6c",
  );
});

t.test("AD's objectGUID bytes read as Windows shows the GUID", async (t) => {
  // {01234567-89ab-cdef-0123-456789abcdef} as AD stores it: the first three fields reversed.
  const bytes = Buffer.from("67452301ab89efcd0123456789abcdef", "hex");
  t.equal(guidText(bytes), "01234567-89ab-cdef-0123-456789abcdef");
  t.equal(
    canonicalIdentity("objectGUID", bytes.toString("base64")),
    "01234567-89ab-cdef-0123-456789abcdef",
  );
  t.equal(guidText(Buffer.alloc(15)), undefined, "not 16 bytes: no GUID");
});

t.test(
  "auto takes entryUUID, else nsUniqueId, else objectGUID; a setting takes only its own",
  async (t) => {
    const both: Record<string, string[]> = {
      entryUUID: ["0b7e4c1a-1111-4222-8333-444455556666"],
      nsUniqueId: ["66446001-1dd211b2-800000a4-3c1b6c6c"],
    };
    const lookup = (values: Record<string, string[]>) => (name: string) => values[name];
    t.equal(entryIdentity("auto", lookup(both)), "0b7e4c1a-1111-4222-8333-444455556666");
    t.equal(entryIdentity("nsUniqueId", lookup(both)), "66446001-1dd2-11b2-8000-00a43c1b6c6c");
    const stock = { nsUniqueId: both.nsUniqueId! };
    t.equal(entryIdentity("auto", lookup(stock)), "66446001-1dd2-11b2-8000-00a43c1b6c6c");
    t.equal(entryIdentity("entryUUID", lookup(stock)), undefined, "no entryUUID: no identity");
  },
);

t.test("objectGUID's GUID text, braces or not, is its identity too", async (t) => {
  t.equal(
    canonicalIdentity("objectGUID", "{01234567-89AB-CDEF-0123-456789ABCDEF}"),
    "01234567-89ab-cdef-0123-456789abcdef",
  );
});

t.test("an identity is looked for as its attribute writes it", async (t) => {
  const id = "01234567-89ab-cdef-0123-456789abcdef";
  const filter = (setting: Parameters<typeof identityFilter>[0], known?: (a: string) => boolean) =>
    renderFilter(identityFilter(setting, id, known)!);
  t.equal(filter("entryUUID"), `(entryUUID=${id})`);
  t.equal(filter("nsUniqueId"), "(nsUniqueId=01234567-89abcdef-01234567-89abcdef)", "8-8-8-8");
  t.equal(
    filter("objectGUID"),
    "(objectGUID=\\67\\45\\23\\01\\ab\\89\\ef\\cd\\01\\23\\45\\67\\89\\ab\\cd\\ef)",
    "the bytes, first three fields little-endian",
  );
  t.equal(
    filter("auto"),
    `(|(entryUUID=${id})(nsUniqueId=01234567-89abcdef-01234567-89abcdef)(objectGUID=\\67\\45\\23\\01\\ab\\89\\ef\\cd\\01\\23\\45\\67\\89\\ab\\cd\\ef))`,
  );
  t.equal(
    filter("auto", (attribute) => attribute === "entryUUID"),
    `(entryUUID=${id})`,
    "auto: only what the server knows",
  );
  t.equal(
    filter("nsUniqueId", () => false),
    "(nsUniqueId=01234567-89abcdef-01234567-89abcdef)",
  );
  t.equal(
    identityFilter("auto", "01234567-89abcdef-01234567-89abcdef"),
    undefined,
    "not UUID text",
  );
  t.same(identityFilter("auto", id.toUpperCase()), identityFilter("auto", id), "any case");
});
