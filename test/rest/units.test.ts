import t from "tap";
import { parseConfig } from "../../src/config/index.ts";
import { parseFilter } from "../../src/filters/index.ts";
import { parameterComponents } from "../../src/rest/openapi/parameters.ts";
import { globalId, parseGlobalId } from "../../src/history/index.ts";
import { AttributeCatalog, requiredObjectClasses } from "../../src/rest/catalog.ts";
import { CursorCodec } from "../../src/rest/cursor.ts";
import { storableText } from "../../src/capture/index.ts";
import { decodeCursor, encodeCursor } from "../../src/store/index.ts";
import { contentDisposition } from "../../src/rest/export/filename.ts";
import { ldifFormat } from "../../src/rest/export/ldif.ts";
import { parseFields } from "../../src/rest/fields.ts";
import { generalizedTimeToIso, serveAttribute } from "../../src/rest/nodes.ts";
import { readPreferences } from "../../src/rest/prefer.ts";
import { RestError } from "../../src/rest/errors.ts";
import { classifyError, problemOf } from "../../src/errors/index.ts";
import { parseSort } from "../../src/rest/sort.ts";
import { TEST_SCHEMA } from "./fixtures/harness.ts";

const catalog = AttributeCatalog.fromDirectorySchema(TEST_SCHEMA, ["userPassword"]);

t.test("Prefer: the first handling stated wins; others are ignored", async (t) => {
  t.same(readPreferences(undefined), { handling: "lenient", stated: false });
  t.same(readPreferences("handling=strict"), { handling: "strict", stated: true });
  t.same(readPreferences('respond-async, Handling="STRICT"; x=1'), {
    handling: "strict",
    stated: true,
  });
  t.same(readPreferences(["wait=5", "handling=lenient, handling=strict"]), {
    handling: "lenient",
    stated: true,
  });
  t.same(readPreferences("handling=sloppy"), { handling: "lenient", stated: false });
});

t.test("global IDs: base64 of <type>:<entryUUID>, read in either base64 alphabet", async (t) => {
  const uuid = "5f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f";
  const id = globalId("user", uuid.toUpperCase());
  t.equal(Buffer.from(id, "base64").toString(), `user:${uuid}`);
  t.same(parseGlobalId(id), { type: "user", entryUUID: uuid });
  t.same(parseGlobalId(id.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "")), {
    type: "user",
    entryUUID: uuid,
  });
  for (const bad of [
    "",
    "dXNlcg==",
    Buffer.from(`user:${uuid}x`).toString("base64"),
    `${id}!`,
    Buffer.from(`1x:${uuid}`).toString("base64"),
    "uid=alice,dc=x",
  ]) {
    t.equal(parseGlobalId(bad), undefined, bad);
  }
});

/**
 * Every string that decodes to the same bytes as `text` but is not `text`: base64url's last
 * character carries bits no byte uses, so several characters there decode alike.
 */
function base64urlAliases(text: string): string[] {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const bytes = Buffer.from(text, "base64url");
  return [...alphabet]
    .map((char) => text.slice(0, -1) + char)
    .filter((alias) => alias !== text && Buffer.from(alias, "base64url").equals(bytes));
}

t.test(
  "a cursor is taken only in its canonical encoding (the fuzz seed -1750975250)",
  async (t) => {
    const codec = new CursorCodec("0123456789abcdef", Buffer.alloc(32, 7));
    const cursor = codec.encode("changes", "", ["1000", 7]);
    const [body, mac] = cursor.split(".") as [string, string];
    const aliases = [
      ...base64urlAliases(mac).map((alias) => `${body}.${alias}`),
      ...base64urlAliases(body).map((alias) => `${alias}.${mac}`),
    ];
    t.ok(aliases.length > 0, "the MAC's last character has unused bits");
    for (const alias of aliases) {
      t.throws(() => codec.decode("after", alias, "changes", ""), { code: "ANNAL_CURSOR_INVALID" });
    }

    const position = { transactionId: "1000", position: 7 };
    const stored = encodeCursor("0123456789abcdef", position);
    t.same(decodeCursor("0123456789abcdef", stored), position);
    for (const alias of [
      ...base64urlAliases(stored),
      encodeCursor("0123456789abcdef", { transactionId: "01000", position: 7 }),
    ]) {
      t.throws(() => decodeCursor("0123456789abcdef", alias), { code: "ANNAL_CURSOR_INVALID" });
    }
  },
);

t.test("cursors: opaque, signed, bound to their database and query", async (t) => {
  const key = Buffer.alloc(32, 7);
  const codec = new CursorCodec("0123456789abcdef", key);
  const cursor = codec.encode("search", "q1", ["smith", "uuid"]);
  t.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  t.same(codec.decode("after", cursor, "search", "q1"), ["smith", "uuid"]);
  t.throws(() => codec.decode("after", cursor, "search", "q2"), { code: "ANNAL_CURSOR_MISMATCH" });
  t.throws(() => codec.decode("after", cursor, "changes", "q1"), { code: "ANNAL_CURSOR_MISMATCH" });
  const other = new CursorCodec("fedcba9876543210", Buffer.alloc(32, 8));
  t.throws(() => other.decode("before", cursor, "search", "q1"), {
    code: "ANNAL_CURSOR_FOREIGN",
    details: { parameter: "before" },
  });
  const sameEpochOtherKey = new CursorCodec("0123456789abcdef", Buffer.alloc(32, 9));
  t.throws(() => sameEpochOtherKey.decode("after", cursor, "search", "q1"), {
    code: "ANNAL_CURSOR_INVALID",
  });
  for (const bad of [
    "",
    ".",
    "a.",
    cursor.replace(".", ""),
    `${cursor.slice(0, -2)}AA`,
    "x".repeat(5000) + ".a",
  ]) {
    t.throws(
      () => codec.decode("after", bad, "search", "q1"),
      { code: "ANNAL_CURSOR_INVALID", status: 400 },
      bad.slice(0, 20),
    );
  }
});

t.test("values are served by their syntax, anything unreadable as the text it is", async (t) => {
  const info = (name: string) => catalog.resolve(name);
  t.equal(serveAttribute(info("uidNumber"), ["42"]), 42);
  t.equal(serveAttribute(info("uidNumber"), ["123456789012345678901"]), "123456789012345678901");
  t.equal(serveAttribute(info("uidNumber"), ["forty"]), "forty");
  t.equal(serveAttribute(info("accountActive"), ["TRUE"]), true);
  t.equal(serveAttribute(info("accountActive"), ["maybe"]), "maybe");
  t.equal(serveAttribute(info("modifyTimestamp"), ["20261122043500Z"]), "2026-11-22T04:35:00Z");
  t.same(serveAttribute(info("cn"), ["a", "b"]), ["a", "b"]);
  t.equal(serveAttribute(info("displayName"), ["x", "y"]), "x", "single-valued: one value");
  t.equal(serveAttribute(info("displayName"), undefined), null);
  t.same(serveAttribute(undefined, ["v"]), ["v"], "unknown to the schema: a list of strings");
  t.same(
    serveAttribute(info("cn"), [storableText("a\u0000b"), storableText("\uFFFFx")]),
    ["a\u0000b", "\uFFFFx"],
    "a value stored encoded (U+0000) is served as the directory holds it",
  );
  t.same(serveAttribute(undefined, [storableText("a\u0000b")]), ["a\u0000b"]);
  t.equal(generalizedTimeToIso("20261122043500.123+0200"), "2026-11-22T04:35:00.123+02:00");
  t.equal(generalizedTimeToIso("202611220435Z"), "2026-11-22T04:35:00Z");
  t.equal(generalizedTimeToIso("20261322043500Z"), undefined);
});

t.test("the catalog knows names by alias and letter case, never redacted ones", async (t) => {
  t.equal(catalog.resolve("commonName")?.name, "cn");
  t.equal(catalog.resolve("CN;lang-de")?.name, "cn");
  t.equal(catalog.resolve("2.5.4.3")?.name, "cn");
  t.equal(catalog.resolve("userPassword"), undefined);
  t.ok(catalog.isRedacted("USERPASSWORD;binary"));
  t.same(
    requiredObjectClasses(
      "(&(objectClass=inetOrgPerson)(|(objectClass=x)(ou=y))(!(objectClass=z)))",
    ),
    ["inetOrgPerson"],
  );
  t.same(requiredObjectClasses("not a filter"), []);
});

t.test("fields and sort lists", async (t) => {
  const fields = parseFields(" cn , MAIL,nope,*,1.1,id", catalog);
  t.same(
    fields.selection.names.map((i) => i.name),
    ["cn", "mail"],
  );
  t.ok(fields.selection.allUser && fields.selection.wildcard && fields.selection.explicit);
  t.same(fields.unknown, ["nope"]);
  t.same(
    parseFields("cn, ", catalog).selection.allOperational,
    true,
    "an unencoded + arrives as a blank",
  );
  const sort = parseSort("-sn,+givenName,dn,-entryUUID,sn,nope,-,a b", catalog);
  t.same(
    sort.keys.map((k) => `${k.descending ? "-" : ""}${k.name}`),
    ["-sn", "givenName", "dn", "-entryUUID"],
  );
  t.same(sort.unknown, ["nope"]);
  t.same(sort.malformed, ["-", "a b"]);
});

t.test("Content-Disposition names the file for old and new clients", async (t) => {
  t.equal(
    contentDisposition("users.csv"),
    `attachment; filename="users.csv"; filename*=UTF-8''users.csv`,
  );
  t.equal(
    contentDisposition("Übersicht (1).csv"),
    `attachment; filename="_bersicht (1).csv"; filename*=UTF-8''%C3%9Cbersicht%20%281%29.csv`,
  );
});

t.test("LDIF folds long lines and base64-encodes unsafe values", async (t) => {
  const info = catalog.resolve("description")!;
  const writer = ldifFormat.writer(
    {
      type: "user",
      catalog,
      node: () => ({}),
      selection: {
        allUser: false,
        allOperational: false,
        names: [info],
        wildcard: false,
        explicit: true,
      },
    },
    { wrap: 20, version: true },
  );
  const text = writer.rows([
    {
      entry_uuid: "u",
      dn: "uid=x,dc=example,dc=org",
      modified_at: new Date(),
      attributes: { description: ["a".repeat(45), "ends with space ", "née"] },
      operational: null,
    },
  ]);
  t.equal(
    text,
    [
      "dn: uid=x,dc=example",
      " ,dc=org",
      "description: aaaaaaa",
      " aaaaaaaaaaaaaaaaaaa",
      " aaaaaaaaaaaaaaaaaaa",
      "description:: ZW5kcy",
      " B3aXRoIHNwYWNlIA==",
      "description:: bsOpZQ",
      " ==",
      "",
      "",
    ].join("\n"),
  );
});

t.test("[rest]: defaults, limits and the time zone", async (t) => {
  const parse = (text: string) => parseConfig(text, { path: "annal.toml", env: {} });
  t.same(parse("").rest, {
    enabled: true,
    pageSize: 50,
    maxPageSize: 1000,
    timeZone: "UTC",
    export: { maxRows: 1_000_000, maxConcurrent: 4, batchSize: 1000 },
  });
  t.match(
    parse('[rest]\ntimeZone = "Europe/Berlin"\npageSize = 20\n[rest.export]\nmaxRows = 0').rest,
    {
      timeZone: "Europe/Berlin",
      pageSize: 20,
      export: { maxRows: 0 },
    },
  );
  t.throws(() => parse('[rest]\ntimeZone = "Mars/Olympus"'), {
    code: "ANNAL_CONFIG_INVALID",
    message: /rest\.timeZone: expected an IANA time zone/,
  });
  t.throws(() => parse("[rest]\npageSize = 2000"), {
    message: /rest\.pageSize: must not be larger than maxPageSize/,
  });
  t.throws(() => parse("[rest]\npagesize = 20"), { code: "ANNAL_CONFIG_UNKNOWN_KEY" });
  t.throws(() => parse("[rest.export]\nmaxConcurrent = 0"), {
    message: /rest\.export\.maxConcurrent/,
  });
});

t.test("the filter examples the description gives are filters", async (t) => {
  const { filter } = parameterComponents({ pageSize: 50, maxPageSize: 1000, timeZone: "UTC" });
  const examples = [...String(filter.description).matchAll(/^- .*?: `([^`]+)`/gm)].map(
    (m) => m[1]!,
  );
  t.equal(examples.length, 4);
  const formats = examples.map((example) => parseFilter(example).format);
  t.same(formats, ["json", "ldap", "expression", "scim"]);
});

t.test(
  "a problem's own members (type, status, ...) are never overwritten by its extras",
  async (t) => {
    const problem = problemOf(
      classifyError(
        new RestError("ANNAL_TYPE_UNKNOWN", "there is no entry type at /api/entries/hats", {
          status: 404,
          details: { type: "hats", status: 200, entryType: "hats" },
        }),
        "req-1",
      ),
    );
    t.equal(problem.type, "urn:annal:problem:ANNAL_TYPE_UNKNOWN");
    t.equal(problem.status, 404);
    t.equal((problem as unknown as { entryType: string }).entryType, "hats");
  },
);
