import { readFile } from "node:fs/promises";
import path from "node:path";
import * as prettier from "prettier";
import { parse as parseToml } from "smol-toml";
import t from "tap";
import { z } from "zod";
import {
  configReference,
  configTables,
  describeTables,
  REFERENCE_FILE,
  type TableReference,
  tomlValue,
} from "../../src/config/reference/index.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** Every table and key that says nothing about what it means, by its full path. */
function undocumented(tables: readonly TableReference[]): string[] {
  return tables.flatMap((table) => [
    ...(table.path !== "" && table.description === undefined ? [table.header] : []),
    ...table.keys.filter((key) => key.description === undefined).map((key) => key.path),
  ]);
}

t.test("every table and every key of the configuration has a description", async (t) => {
  t.same(undocumented(configTables()), []);
});

t.test("a new option without a description is named by the check", async (t) => {
  const tables = describeTables(
    z.strictObject({
      server: z
        .strictObject({
          port: z.number().default(1).meta({ description: "Documented." }),
          newOption: z.string().optional(),
          nested: z.strictObject({ deeper: z.boolean().default(false) }).prefault({}),
        })
        .meta({ description: "Documented too." }),
      jobs: z.array(z.strictObject({ id: z.string().meta({ description: "Documented." }) })),
    }),
  );
  t.same(undocumented(tables), [
    "server.newOption",
    "[server.nested]",
    "server.nested.deeper",
    "[[jobs]]",
  ]);
});

t.test("every key has an example line that is TOML and that its schema accepts", async (t) => {
  for (const table of configTables()) {
    for (const key of table.keys) {
      if (key.example === undefined) {
        t.fail(`${key.path} has neither an example nor a default`);
        continue;
      }
      const line = `${key.key} = ${tomlValue(key.example)}`;
      const written = parseToml(line)[key.key];
      const result = key.schema.safeParse(written);
      t.ok(result.success, `${key.path}: ${line}`);
    }
  }
});

t.test("the reference names every table in its contents, with working links", async (t) => {
  const reference = configReference();
  const headings = [...reference.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  for (const table of configTables()) {
    t.ok(headings.includes(`\`${table.header}\``), `a section for ${table.header}`);
  }
  const anchors = new Set(
    [...reference.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      m[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, "")
        .replace(/\s/g, "-"),
    ),
  );
  for (const [, anchor] of reference.matchAll(/\]\(#([^)]+)\)/g)) {
    t.ok(anchors.has(anchor!), `#${anchor} is a heading`);
  }
  t.match(reference, /generated .* by `npm run docs`; do not edit it/);
});

t.test("the committed docs/configuration.md is current, and as prettier writes it", async (t) => {
  const file = path.join(ROOT, REFERENCE_FILE);
  const committed = await readFile(file, "utf8");
  const generated = configReference();
  t.equal(committed, generated, "run npm run docs");
  const options = (await prettier.resolveConfig(file)) ?? {};
  t.equal(await prettier.format(generated, { ...options, filepath: file }), generated);
});
