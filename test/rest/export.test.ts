import { request as httpRequest, type ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import { parse as parseCsv } from "csv-parse/sync";
import ldif from "ldif";
import t, { type Test } from "tap";
import { eventually } from "../support/eventually.ts";
import { PEOPLE, restHarness, testConfig, type RestHarness } from "./fixtures/harness.ts";

t.setTimeout(300_000);

const q = encodeURIComponent;
const FIELDS =
  "cn,sn,mail,uidNumber,accountActive,description,telephoneNumber,jpegPhoto,modifyTimestamp";
const JPEG = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0xff, 0xd9,
]);

/** Values that trip naive writers: delimiters, quotes, line breaks, formulas, non-ASCII. */
async function setUp(t: Test, harness?: RestHarness) {
  const h = harness ?? (await restHarness(t));
  const people: [string, Record<string, string[]>][] = [
    [
      "ann",
      {
        cn: ['Ann, the "first"'],
        sn: ["Émile"],
        mail: ["ann@example.org"],
        description: ["line one\nline two", "tab\there"],
      },
    ],
    [
      "ben",
      { cn: ["=SUM(A1:A2)"], sn: ["-Ben"], description: [" leading space", "trailing space "] },
    ],
    [
      "cat",
      {
        cn: ["Cat"],
        sn: ["Ng"],
        mail: ["cat@example.org", "c@example.org"],
        jpegPhoto: [JPEG.toString("base64")],
      },
    ],
    [
      "dan",
      {
        cn: ["Dan"],
        sn: ["O'Neil"],
        description: ["back\\slash; semi; pipe|"],
        accountActive: ["FALSE"],
      },
    ],
    ["eve", { cn: ["Éve 😀"], sn: ["Ünal"], description: [":colon first", "<angle first"] }],
  ];
  let number = 2000;
  for (const [uid, attributes] of people) {
    await h.history.add({
      dn: `uid=${uid},${PEOPLE}`,
      type: "user",
      attributes: {
        objectClass: ["inetOrgPerson"],
        uid: [uid],
        uidNumber: [String(number++)],
        telephoneNumber: ["+1 555 0100"],
        ...attributes,
      },
    });
  }
  await h.history.settled();
  const search = (await h.get(`/api/entries/users?sort=uid&fields=${FIELDS}`)).json();
  return { ...h, nodes: search.nodes as Record<string, unknown>[] };
}

const cell = (value: unknown) =>
  value === null ? "" : Array.isArray(value) ? value.join("|") : String(value);
const columns = ["entryUUID", "dn", ...FIELDS.split(",")];

t.test("CSV (RFC 4180) parsed back with csv-parse equals the search results", async (t) => {
  const { get, nodes } = await setUp(t);
  const response = await get(
    `/api/entries/users?sort=uid&fields=${FIELDS}&filename=people.csv&export=${q('{"escapeFormulas":false}')}`,
  );
  t.equal(response.statusCode, 200, response.body);
  t.equal(response.headers["content-type"], "text/csv; charset=utf-8; header=present");
  t.equal(
    response.headers["content-disposition"],
    `attachment; filename="people.csv"; filename*=UTF-8''people.csv`,
  );
  t.equal(response.headers["cache-control"], "no-store");
  t.ok(response.body.includes("\r\n"), "CRLF between records");
  const rows = parseCsv(response.body, { relax_column_count: false }) as string[][];
  t.same(rows[0], columns, "a header row");
  t.same(
    rows.slice(1),
    nodes.map((node) => columns.map((column) => cell(node[column]))),
  );
});

t.test("CSV is spreadsheet-safe by default and takes its options", async (t) => {
  const { get, nodes } = await setUp(t);
  const safe = parseCsv(
    (await get(`/api/entries/users?sort=uid&fields=cn,sn&filename=p.csv`)).body,
  ) as string[][];
  t.equal(safe[2]![2], "'=SUM(A1:A2)", "a formula gets a leading '");
  t.equal(safe[2]![3], "'-Ben");
  const options = {
    delimiter: ";",
    nulls: "-",
    header: false,
    separator: " / ",
    lineEnding: "lf",
    bom: true,
  };
  const response = await get(
    `/api/entries/users?sort=uid&fields=${FIELDS}&filename=p.csv&export=${q(JSON.stringify({ ...options, escapeFormulas: false }))}`,
  );
  t.equal(response.headers["content-type"], "text/csv; charset=utf-8; header=absent");
  t.ok(response.body.startsWith("\ufeff"), "a byte order mark");
  const rows = parseCsv(response.body, { delimiter: ";", bom: true }) as string[][];
  t.same(
    rows,
    nodes.map((node) =>
      columns.map((column) => {
        const value = node[column];
        return value === null ? "-" : Array.isArray(value) ? value.join(" / ") : String(value);
      }),
    ),
  );
});

t.test("a ; before a formula is defused in comma CSV and TSV, quoted in ; CSV", async (t) => {
  const h = await restHarness(t);
  const values = [";=1+1", ";+1", ";-1", ";@SUM(A1)", "a;=HYPERLINK(1);b", "a; =1"];
  await h.history.add({
    dn: `uid=fay,${PEOPLE}`,
    type: "user",
    attributes: {
      objectClass: ["inetOrgPerson"],
      uid: ["fay"],
      cn: ["Fay"],
      sn: ["Ng"],
      description: values,
    },
  });
  await h.history.settled();
  const defused = [";'=1+1", ";'+1", ";'-1", ";'@SUM(A1)", "a;'=HYPERLINK(1);b", "a; =1"];
  const url = (file: string, options: object = {}) =>
    `/api/entries/users?fields=description&filename=${file}&export=${q(JSON.stringify({ separator: "\n", ...options }))}`;
  const comma = parseCsv((await h.get(url("p.csv"))).body) as string[][];
  t.same(comma[1]![2]!.split("\n"), defused, "comma CSV");
  const tsv = (await h.get(url("p.tsv"))).body.split("\n")[1]!.split("\t");
  t.same(tsv[2]!.split("\\n"), defused, "TSV");
  // Split on ;, such a file starts no cell with a formula: a cell holding a ; is quoted.
  const semicolon = await h.get(url("p.csv", { delimiter: ";", separator: " | " }));
  t.ok(
    semicolon.body.includes(`;"${values.join(" | ")}"`),
    "; CSV: the values as they are, quoted",
  );
  const plain = parseCsv((await h.get(url("p.csv", { escapeFormulas: false }))).body);
  t.same((plain as string[][])[1]![2]!.split("\n"), values, "escapeFormulas: false");
});

t.test("TSV escapes tabs and line breaks, and parses back", async (t) => {
  const { get, nodes } = await setUp(t);
  const response = await get(
    `/api/entries/users?sort=uid&fields=${FIELDS}&filename=people.tsv&export=${q('{"escapeFormulas":false}')}`,
  );
  t.equal(response.headers["content-type"], "text/tab-separated-values; charset=utf-8");
  const rows = (
    parseCsv(response.body, { delimiter: "\t", quote: false, record_delimiter: "\n" }) as string[][]
  ).map((row) =>
    row.map((field) =>
      field.replace(
        /\\([\\tnr])/g,
        (_, c: string) => ({ "\\": "\\", t: "\t", n: "\n", r: "\r" })[c]!,
      ),
    ),
  );
  t.same(rows[0], columns);
  t.same(
    rows.slice(1),
    nodes.map((node) => columns.map((column) => cell(node[column]))),
  );
});

t.test("JSON, NDJSON and JSON-seq hold exactly the search's nodes", async (t) => {
  const { get, nodes } = await setUp(t);
  const json = await get(`/api/entries/users?sort=uid&fields=${FIELDS}&filename=people.json`);
  t.equal(json.headers["content-type"], "application/json; charset=utf-8");
  t.same(JSON.parse(json.body), nodes);
  const ndjson = await get(`/api/entries/users?sort=uid&fields=${FIELDS}&filename=people.ndjson`);
  t.equal(ndjson.headers["content-type"], "application/x-ndjson; charset=utf-8");
  t.same(
    ndjson.body
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line)),
    nodes,
  );
  const seq = await get(`/api/entries/users?sort=uid&fields=${FIELDS}&filename=people.json-seq`);
  t.equal(seq.headers["content-type"], "application/json-seq");
  const records = seq.body.split("\u001e");
  t.equal(records.shift(), "", "each record starts with RS");
  t.ok(
    records.every((record) => record.endsWith("\n")),
    "and ends with LF",
  );
  t.same(
    records.map((record) => JSON.parse(record)),
    nodes,
  );
  const omitted = JSON.parse(
    (
      await get(
        `/api/entries/users?sort=uid&fields=mail&filename=p.json&export=${q('{"nulls":"omit"}')}`,
      )
    ).body,
  );
  t.notOk("mail" in omitted[1], 'nulls: "omit" leaves absent attributes out');
  const empty = await get(
    `/api/entries/users?filter=${q("uid = nobody")}&fields=cn&filename=none.json`,
  );
  t.same(JSON.parse(empty.body), [], "an empty result is an empty array");
});

t.test("JSON-LD has a @context, and each entry an @id and @type", async (t) => {
  const { get, nodes } = await setUp(t);
  const response = await get(`/api/entries/users?sort=uid&fields=${FIELDS}&filename=people.jsonld`);
  t.equal(response.headers["content-type"], "application/ld+json; charset=utf-8");
  const document = JSON.parse(response.body);
  t.same(document["@context"], { "@vocab": "urn:annal:attribute:" });
  t.same(
    document["@graph"],
    nodes.map(({ id: _id, type, entryUUID, ...rest }) => ({
      "@id": `urn:uuid:${entryUUID}`,
      "@type": type,
      entryUUID,
      ...rest,
    })),
  );
  const vocab = JSON.parse(
    (
      await get(
        `/api/entries/users?fields=cn&filename=p.jsonld&export=${q('{"vocab":"https://schema.example/"}')}`,
      )
    ).body,
  );
  t.equal(vocab["@context"]["@vocab"], "https://schema.example/");
});

t.test(
  "LDIF (RFC 2849) parsed back with the ldif package holds the directory's values",
  async (t) => {
    const { get, nodes } = await setUp(t);
    const response = await get(`/api/entries/users?sort=uid&fields=${FIELDS}&filename=people.ldif`);
    t.equal(response.headers["content-type"], "text/x-ldif; charset=utf-8");
    t.ok(response.body.startsWith("version: 1\n\n"));
    t.ok(
      response.body.split("\n").every((line) => line.length <= 76),
      "lines folded at 76",
    );
    const records = ldif.parse(response.body);
    const parsed = [];
    for (let record = records.shift(); record; record = records.shift()) {
      parsed.push(record.toObject({ flatten: false }));
    }
    t.equal(parsed.length, nodes.length);
    const raw = (value: unknown) =>
      value === true
        ? "TRUE"
        : value === false
          ? "FALSE"
          : String(value).replace(/^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z$/, "$1$2$3$4$5$6Z");
    parsed.forEach((entry, index) => {
      const node = nodes[index]!;
      t.equal(entry.dn, node.dn);
      const expected: Record<string, string[]> = {};
      for (const name of FIELDS.split(",")) {
        const value = node[name];
        if (value === null || name === "jpegPhoto") continue;
        expected[name] = (Array.isArray(value) ? value : [value]).map(raw);
      }
      const { jpegPhoto: _photo, ...attributes } = entry.attributes as Record<string, string[]>;
      t.same(attributes, expected, String(node.dn));
    });
    const unfolded = response.body.replace(/\n /g, "");
    t.ok(unfolded.includes(`jpegPhoto:: ${JPEG.toString("base64")}\n`), "binary values base64");
    t.ok(
      unfolded.includes(`description:: ${Buffer.from(" leading space").toString("base64")}\n`),
      "unsafe strings base64",
    );
    const unwrapped = await get(
      `/api/entries/users?fields=cn&filename=p.ldif&export=${q('{"wrap":0,"version":false}')}`,
    );
    t.notOk(unwrapped.body.startsWith("version"));
  },
);

t.test("export needs an explicit field list, a known extension and valid options", async (t) => {
  const { get } = await setUp(t);
  for (const fields of ["", "&fields=*", "&fields=%2B", "&fields=cn,*"]) {
    const response = await get(`/api/entries/users?filename=p.csv${fields}`);
    t.match(
      response.json(),
      { status: 400, code: "ANNAL_EXPORT_FIELDS_REQUIRED", parameter: "fields" },
      fields,
    );
  }
  t.equal(
    (await get("/api/entries/users?filename=p.csv&fields=1.1")).statusCode,
    200,
    "1.1 is explicit",
  );
  const format = await get("/api/entries/users?filename=p.xlsx&fields=cn");
  t.match(format.json(), { status: 400, code: "ANNAL_EXPORT_FORMAT_UNKNOWN", expected: Array });
  for (const name of ["../p.csv", ".csv", "a\u0001.csv", 'a".csv']) {
    const response = await get(`/api/entries/users?filename=${q(name)}&fields=cn`);
    t.match(response.json(), { status: 400, code: "ANNAL_FILENAME_INVALID" }, name);
  }
  const controls = ["\t", "\u0000", "\u001f", "\u007f", "\u0085"].map((d) =>
    JSON.stringify({ delimiter: d }),
  );
  for (const options of [
    "{",
    "[1]",
    '{"delimiter":";;"}',
    '{"colour":"red"}',
    '{"wrap":3}',
    // A control character as delimiter (a tab is the tsv format's).
    ...controls,
  ]) {
    const response = await get(`/api/entries/users?filename=p.csv&fields=cn&export=${q(options)}`);
    t.match(
      response.json(),
      { status: 400, code: "ANNAL_EXPORT_OPTIONS_INVALID", options: Array },
      options,
    );
  }
  const noFile = await get(`/api/entries/users?export=${q('{"delimiter":";"}')}`);
  t.match(noFile.json(), { status: 400, code: "ANNAL_PARAMETER_INVALID", parameter: "export" });
  t.equal(
    (await get(`/api/entries/users?export=${q("{}")}`)).statusCode,
    200,
    "{} asks for nothing",
  );
  const unicode = await get(`/api/entries/users?fields=cn&filename=${q("Übersicht 2026.csv")}`);
  t.equal(
    unicode.headers["content-disposition"],
    `attachment; filename="_bersicht 2026.csv"; filename*=UTF-8''%C3%9Cbersicht%202026.csv`,
  );
});

t.test("export bypasses pagination and honours filter and sort", async (t) => {
  const harness = await restHarness(t, { config: testConfig("[rest.export]\nbatchSize = 2") });
  const { get } = await setUp(t, harness);
  const body = (await get(`/api/entries/users?first=1&sort=-uid&fields=1.1&filename=p.ndjson`))
    .body;
  t.same(
    body
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line).dn.slice(4, 7)),
    ["eve", "dan", "cat", "ben", "ann"],
  );
  const filtered = (
    await get(`/api/entries/users?filter=${q("mail=*")}&fields=uid&filename=p.ndjson`)
  ).body;
  t.equal(filtered.trimEnd().split("\n").length, 2);
});

t.test("an export larger than maxRows is refused before anything is sent", async (t) => {
  const harness = await restHarness(t, { config: testConfig("[rest.export]\nmaxRows = 3") });
  const { get } = await setUp(t, harness);
  const response = await get("/api/entries/users?fields=cn&filename=p.csv");
  t.match(response.json(), { status: 400, code: "ANNAL_EXPORT_TOO_LARGE", maxRows: 3 });
  t.equal(
    (await get(`/api/entries/users?filter=${q("sn=N*")}&fields=cn&filename=p.csv`)).statusCode,
    200,
  );
});

t.test("exports stream with backpressure; more than maxConcurrent at once get 429", async (t) => {
  const harness = await restHarness(t, {
    config: testConfig("[rest.export]\nmaxConcurrent = 1\nbatchSize = 100"),
  });
  const { app, pool, get } = harness;
  // 20,000 entries of 1 kB straight into the projection: far more than socket buffers hold.
  await pool.query(
    `INSERT INTO projection_entries.entries
       (entry_uuid, type, dn, dn_norm, attributes, operational, created_at, modified_at, version, created_position, position, transaction_id)
     SELECT gen_random_uuid(), 'user', 'uid=u' || g || ',${PEOPLE}', 'uid=u' || g || ',${PEOPLE}',
            jsonb_build_object('cn', jsonb_build_array(repeat('x', 1000))), '{}', now(), now(), 1, g, g, '1'::xid8
       FROM generate_series(1, 20000) AS g`,
  );
  const address = await app.listen({ host: "127.0.0.1", port: 0 });
  // The export's response, and the stream of rows Fastify pipes into it.
  let served: ServerResponse | undefined;
  let rows: Readable | undefined;
  app.server.once("request", (_request, response) => {
    served = response;
    response.once("pipe", (source) => (rows = source));
  });
  const url = new URL("/api/entries/users?fields=cn&filename=big.csv", address);
  const slow = httpRequest(url, { headers: harness.auth });
  t.teardown(() => slow.destroy());
  const received = await new Promise<{ bytes: number; destroy: () => void }>((resolve, reject) => {
    slow.on("error", reject);
    slow.on("response", (response) => {
      let bytes = 0;
      response.once("data", (chunk: Buffer) => {
        bytes += chunk.length;
        response.pause();
        resolve({ bytes, destroy: () => slow.destroy() });
      });
    });
    slow.end();
  });
  t.ok(received.bytes > 0, "the first export is streaming");
  // The client reads no more. Once the socket's buffers are full the response can take
  // nothing either, and once the stream of rows holds its high-water mark it asks the
  // database for no more: from then on the export waits for the client, and nothing is read.
  // (An export that read ahead regardless would never get there.)
  const held = await eventually(
    () =>
      served?.writableNeedDrain && rows && rows.readableLength >= rows.readableHighWaterMark
        ? rows
        : undefined,
    { what: "the export waits for the paused client", interval: 10 },
  );
  t.ok(
    held.readableLength < 1_000_000,
    `${held.readableLength} bytes of rows wait in memory, of over 20 MB`,
  );
  const busy = await get("/api/entries/users?fields=cn&filename=other.csv");
  t.equal(busy.statusCode, 429);
  t.equal(busy.headers["retry-after"], "5");
  t.match(busy.json(), { code: "ANNAL_EXPORT_BUSY", maxConcurrent: 1 });
  const cursors = await pool.query(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT * FROM (SELECT e.entry_uuid%'",
  );
  t.equal(cursors.rows[0].n, 1, "the paused export holds its cursor open, not all rows in memory");
  received.destroy();
  // The aborted download gives its place back.
  const after = await eventually(
    async () => {
      const response = await get(
        `/api/entries/users?fields=cn&filename=p.csv&filter=${q("uid=u1")}`,
      );
      return response.statusCode === 429 ? undefined : response;
    },
    { what: "a place is free again", timeout: 5_000, interval: 100 },
  );
  t.equal(after.statusCode, 200, "a place is free again once the client went away");
});
