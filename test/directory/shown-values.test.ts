import t from "tap";
import {
  filterAsStored,
  guidBytes,
  guidText,
  shownText,
  sidBytes,
  sidText,
  storedFromShown,
} from "../../src/directory/index.ts";

/** MS-DTYP 2.4.2: a SID's bytes and its string form, both ways, and what is no SID. */
t.test("SIDs as Windows writes them, and back to the same bytes", async (t) => {
  // The well-known ones of MS-DTYP 2.4.2.4, and a domain account's.
  for (const text of [
    "S-1-0-0",
    "S-1-1-0",
    "S-1-5-18",
    "S-1-5-32-544",
    "S-1-5-21-2985239592-771806441-3447133094-500",
    "S-1-5-21-4294967295-0-1-4294967295",
    "S-1-16-12288",
    "S-1-5",
  ]) {
    const bytes = sidBytes(text)!;
    t.equal(sidText(bytes), text, text);
  }
  // A user's SID as the DC gives it (28 bytes: 5 sub-authorities).
  const administrator = Buffer.from("AQUAAAAAAAUVAAAAKCTvsenUAC6mE3fN9AEAAA==", "base64");
  t.equal(sidText(administrator), "S-1-5-21-2985239592-771806441-3447133094-500");
  // An identifier authority of 2^32 or more is written in hexadecimal.
  const big = Buffer.from([1, 1, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 1, 0, 0, 0]);
  t.equal(sidText(big), "S-1-0x123456789abc-1");
  t.same(sidBytes("S-1-0x123456789abc-1"), big);

  for (const wrong of [
    Buffer.alloc(0),
    Buffer.from([2, 0, 0, 0, 0, 0, 0, 5]), // revision 2
    Buffer.from([1, 2, 0, 0, 0, 0, 0, 5, 1, 0, 0, 0]), // says 2 sub-authorities, has 1
    Buffer.alloc(16), // a GUID's length
  ]) {
    t.equal(sidText(wrong), undefined, `not a SID: ${wrong.toString("hex")}`);
  }
  for (const wrong of ["S-1", "S-2-5-21", "S-1-5-x", "S-1-5-4294967296", "s-1-5--1", "AQUA"]) {
    t.equal(sidBytes(wrong), undefined, `not a SID's text: ${wrong}`);
  }
  t.equal(sidBytes(`S-1-5${"-1".repeat(16)}`), undefined, "16 sub-authorities are one too many");
});

t.test("GUIDs as Windows writes them, and back", async (t) => {
  const bytes = Buffer.from("GuWnAOhsOEmLJjl9Heq3uQ==", "base64");
  const text = guidText(bytes)!;
  t.equal(text, "00a7e51a-6ce8-4938-8b26-397d1deab7b9");
  t.same(guidBytes(text), bytes);
  t.same(guidBytes(`{${text.toUpperCase()}}`), bytes, "braces and upper case");
  t.equal(guidBytes("00a7e51a6ce849388b26397d1deab7b9"), undefined);
});

t.test("stored values shown, and filters on the shown form compared as stored", async (t) => {
  const stored = "AQUAAAAAAAUVAAAAKCTvsenUAC6mE3fN9AEAAA==";
  const sid = "S-1-5-21-2985239592-771806441-3447133094-500";
  t.equal(shownText("sid", stored), sid);
  t.equal(shownText("sid", "AAAA"), "AAAA", "bytes that are no SID stay base64");
  t.equal(storedFromShown("sid", sid), stored);
  t.equal(storedFromShown("sid", stored), stored, "base64 as stored is taken as it is");

  const shownOf = (name: string) =>
    name === "objectSid" ? ("sid" as const) : name === "objectGUID" ? ("guid" as const) : undefined;
  t.same(
    filterAsStored(
      {
        op: "or",
        filters: [
          { op: "eq", attribute: "objectSid", value: sid },
          {
            op: "not",
            filter: {
              op: "eq",
              attribute: "objectGUID",
              value: "00a7e51a-6ce8-4938-8b26-397d1deab7b9",
            },
          },
          { op: "eq", attribute: "cn", value: sid },
          { op: "present", attribute: "objectSid" },
          { op: "substring", attribute: "objectSid", initial: "S-1-5-21", any: [] },
        ],
      },
      shownOf,
    ),
    {
      op: "or",
      filters: [
        { op: "eq", attribute: "objectSid", value: stored },
        {
          op: "not",
          filter: { op: "eq", attribute: "objectGUID", value: "GuWnAOhsOEmLJjl9Heq3uQ==" },
        },
        { op: "eq", attribute: "cn", value: sid },
        { op: "present", attribute: "objectSid" },
        { op: "substring", attribute: "objectSid", initial: "S-1-5-21", any: [] },
      ],
    },
  );
});
