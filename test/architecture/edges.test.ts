import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import t from "tap";

/**
 * The edges the architecture forbids, read from the sources' imports: nothing in `src/`
 * imports `ops/` (the demo's configuration and files are data a deployment replaces; the
 * private slapd launcher and the demo organisation live in `src/slapd/` and `src/demo/`);
 * the GraphQL directives know the gateway only through their context (`src/graphql/context.ts`),
 * never the gateway itself or the configuration.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((f) => f.isFile() && f.name.endsWith(".ts"))
    .map((f) => path.relative(ROOT, path.join(f.parentPath, f.name)));
}

/** The relative module paths a file imports, resolved against the repository's root. */
function imports(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), "utf8");
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^"';]*?from\s+"(\.[^"]+)"/g)].map((m) =>
    path.relative(ROOT, path.resolve(ROOT, path.dirname(file), m[1]!)),
  );
}

t.test("nothing in src imports ops", async (t) => {
  const edges = sources("src").flatMap((file) =>
    imports(file)
      .filter((target) => target.startsWith("ops/"))
      .map((target) => `${file} → ${target}`),
  );
  t.same(edges, []);
});

/** Where the gateway and the configuration are: a directive reaches neither. */
function gatewayOrConfig(target: string): boolean {
  return (
    target.startsWith("src/config/") ||
    ["src/graphql/gateway.ts", "src/graphql/plugin.ts", "src/graphql/index.ts"].includes(target)
  );
}

t.test("the GraphQL directives import neither the gateway nor the configuration", async (t) => {
  const files = [...sources("src/graphql/directives"), "src/graphql/context.ts"];
  t.ok(files.length > 10, "the directives are found");
  const edges = files.flatMap((file) =>
    imports(file)
      .filter(gatewayOrConfig)
      .map((target) => `${file} → ${target}`),
  );
  t.same(edges, []);
  const named = files.filter((file) =>
    /\b(AnnalConfig|Gateway)\b/.test(readFileSync(path.join(ROOT, file), "utf8")),
  );
  t.same(named, [], "no directive names the Gateway or AnnalConfig type");
});

t.test("the check reads the relative imports of a file", async (t) => {
  t.same(
    imports("test/support/capture.ts").filter((target) => target.startsWith("src/")).length > 0,
    true,
  );
  // Type-only imports count too: the plugin has both edges a directive may not.
  t.same(imports("src/graphql/plugin.ts").filter(gatewayOrConfig), [
    "src/config/index.ts",
    "src/graphql/gateway.ts",
  ]);
});
