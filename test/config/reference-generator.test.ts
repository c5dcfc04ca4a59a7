import t from "tap";
import { z } from "zod";
import { duration, integer, localPath, port, text } from "../../src/config/fields.ts";
import {
  describeTables,
  renderTables,
  type TableReference,
  tomlValue,
} from "../../src/config/reference/index.ts";

// A made-up configuration, with each way an option can be written in the real one.
const ctx = { cwd: "/srv", configDir: "/etc/made-up" };
const madeUp = z.strictObject({
  name: text().meta({ description: "What to call it.", example: "demo" }),
  server: z
    .strictObject({
      port: port().default(8080).meta({ description: "Where to listen." }),
      wait: duration().prefault("5s").meta({ description: "How long to wait.", example: "1m" }),
      home: localPath(ctx).optional().meta({ description: "Its home.", example: "data" }),
      mode: z.enum(["fast", "slow"]).default("fast").meta({ description: "How." }),
      tags: z
        .array(text())
        .default([])
        .meta({ description: "Labels.", example: ["a", "b"] }),
      limit: integer(0, Number.MAX_SAFE_INTEGER).default(0).meta({ description: "At most." }),
    })
    .prefault({})
    .meta({ description: "The server." }),
  jobs: z
    .array(z.strictObject({ id: text().meta({ description: "Its id.", example: "nightly" }) }))
    .default([])
    .meta({ description: "The jobs." }),
  kinds: z
    .record(
      z.string().meta({ title: "Kind", example: "Person" }),
      z.looseObject({ base: text().optional().meta({ description: "Where they live." }) }),
    )
    .default({})
    .meta({ description: "The kinds." }),
  extra: z
    .strictObject({ on: z.boolean().meta({ description: "On or off." }) })
    .optional()
    .meta({ description: "Extras." }),
});

const tables = describeTables(madeUp);
const table = (header: string): TableReference => {
  const found = tables.find((candidate) => candidate.header === header);
  if (found === undefined) throw new Error(`no table ${header}`);
  return found;
};
const keysOf = (header: string) =>
  table(header).keys.map(({ path, type, presence, example, description }) => ({
    path,
    type,
    presence,
    example,
    description,
  }));

t.test(
  "every table is found, each before the tables in it, with its header and path",
  async (t) => {
    t.same(
      tables.map(({ header, path, kind, presence, open, tables }) => ({
        header,
        path,
        kind,
        presence,
        open,
        tables,
      })),
      [
        {
          header: "",
          path: "",
          kind: "table",
          presence: { kind: "required" },
          open: false,
          tables: ["[server]", "[[jobs]]", "[kinds.<Kind>]", "[extra]"],
        },
        {
          header: "[server]",
          path: "server",
          kind: "table",
          presence: { kind: "default", value: {} },
          open: false,
          tables: [],
        },
        {
          header: "[[jobs]]",
          path: "jobs[]",
          kind: "array",
          presence: { kind: "default", value: [] },
          open: false,
          tables: [],
        },
        {
          header: "[kinds.<Kind>]",
          path: "kinds.<Kind>",
          kind: "record",
          presence: { kind: "default", value: {} },
          open: true,
          tables: [],
        },
        {
          header: "[extra]",
          path: "extra",
          kind: "table",
          presence: { kind: "optional" },
          open: false,
          tables: [],
        },
      ],
    );
    t.equal(table("[kinds.<Kind>]").exampleHeader, "[kinds.Person]");
    t.equal(table("[server]").description, "The server.");
  },
);

t.test("types in words, and defaults through preprocess, prefault and transforms", async (t) => {
  t.same(keysOf("[server]"), [
    {
      path: "server.port",
      type: "whole number 1–65,535",
      // integer() is a z.preprocess: z.toJSONSchema(…, { io: "input" }) loses this default
      presence: { kind: "default", value: 8080 },
      example: 8080,
      description: "Where to listen.",
    },
    {
      path: "server.wait",
      type: "duration",
      // the prefault is what the user would write, not the milliseconds it resolves to
      presence: { kind: "default", value: "5s" },
      example: "1m",
      description: "How long to wait.",
    },
    {
      path: "server.home",
      type: "path, relative to the directory annal starts in",
      presence: { kind: "optional" },
      example: "data",
      description: "Its home.",
    },
    {
      path: "server.mode",
      type: '"fast" or "slow"',
      presence: { kind: "default", value: "fast" },
      example: "fast",
      description: "How.",
    },
    {
      path: "server.tags",
      type: "list of strings",
      presence: { kind: "default", value: [] },
      example: ["a", "b"],
      description: "Labels.",
    },
    {
      path: "server.limit",
      type: "whole number, 0 or more",
      presence: { kind: "default", value: 0 },
      example: 0,
      description: "At most.",
    },
  ]);
});

t.test("keys at the top, in arrays of tables and in tables by name", async (t) => {
  t.same(keysOf(""), [
    {
      path: "name",
      type: "string",
      presence: { kind: "required" },
      example: "demo",
      description: "What to call it.",
    },
  ]);
  t.same(keysOf("[[jobs]]"), [
    {
      path: "jobs[].id",
      type: "string",
      presence: { kind: "required" },
      example: "nightly",
      description: "Its id.",
    },
  ]);
  t.same(keysOf("[kinds.<Kind>]"), [
    {
      path: "kinds.<Kind>.base",
      type: "string",
      presence: { kind: "optional" },
      example: undefined,
      description: "Where they live.",
    },
  ]);
  t.same(keysOf("[extra]")[0]?.type, "true or false");
});

t.test("unions, records of values and any value have words too", async (t) => {
  const [headers, body, ratio] = describeTables(
    z.strictObject({
      headers: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
      body: z.unknown().optional(),
      ratio: z.number().min(0).max(1),
    }),
  )[0]!.keys;
  t.equal(headers?.type, "table of strings or lists of strings");
  t.equal(body?.type, "any value");
  t.equal(ratio?.type, "number 0–1");
});

t.test("a kind of schema it has no words for is an error, not a wrong word", async (t) => {
  t.throws(() => describeTables(z.strictObject({ when: z.date() })), {
    message: /no words for a schema of type date/,
  });
});

t.test("a table renders as a section with a heading, facts and an example per key", async (t) => {
  const rendered = renderTables([table("[server]"), table("[kinds.<Kind>]")], {
    notes: (key) => (key.path === "server.port" ? ["Overridden by `PORT`"] : []),
  });
  t.equal(
    rendered,
    `## \`[server]\`

The server.

Optional: without it, every key takes its default.

### \`server.port\`

Where to listen.

- Type: whole number 1–65,535
- Default: \`8080\`
- Overridden by \`PORT\`

\`\`\`toml
[server]
port = 8080
\`\`\`

### \`server.wait\`

How long to wait.

- Type: duration
- Default: \`"5s"\`

\`\`\`toml
[server]
wait = "1m"
\`\`\`

### \`server.home\`

Its home.

- Type: path, relative to the directory annal starts in
- Default: none

\`\`\`toml
[server]
home = "data"
\`\`\`

### \`server.mode\`

How.

- Type: "fast" or "slow"
- Default: \`"fast"\`

\`\`\`toml
[server]
mode = "fast"
\`\`\`

### \`server.tags\`

Labels.

- Type: list of strings
- Default: \`[]\`

\`\`\`toml
[server]
tags = ["a", "b"]
\`\`\`

### \`server.limit\`

At most.

- Type: whole number, 0 or more
- Default: \`0\`

\`\`\`toml
[server]
limit = 0
\`\`\`

## \`[kinds.<Kind>]\`

The kinds.

Any number of these tables, one per name, such as \`[kinds.Person]\`; none by default.

Keys other than the ones below are allowed and kept, not refused.

### \`kinds.<Kind>.base\`

Where they live.

- Type: string
- Default: none`,
  );
});

t.test("values are written as TOML", async (t) => {
  t.equal(tomlValue('a "quoted" \\ value'), '"a \\"quoted\\" \\\\ value"');
  t.equal(tomlValue(["x", 1, true]), '["x", 1, true]');
  t.equal(
    tomlValue({ Authorization: "Bearer ${T}", "x.y": [] }),
    '{ Authorization = "Bearer ${T}", "x.y" = [] }',
  );
  t.equal(tomlValue({}), "{}");
  t.throws(() => tomlValue(null), { message: /TOML cannot hold null/ });
});
