import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import t from "tap";

/**
 * The edges the architecture forbids, read from the sources' imports:
 * - nothing in `src/` imports `ops/` (the demo's configuration and files are data a deployment
 *   replaces; the private slapd launcher and the demo organisation live in `src/`);
 * - a module (a folder of `src/` or `projections/`) is reached from outside only through its
 *   face, `index.ts`: the rest of it is private;
 * - feature modules never import `app/` (composition) or `cli/` (the command line): commands
 *   call features, not the other way round;
 * - the GraphQL directives know the gateway only through their context
 *   (`src/graphql/context.ts`), never the gateway itself or the configuration;
 * - date-fns and date-fns-tz are reached only through `src/time/`, which loads date-fns-tz's
 *   CommonJS build (its ES build costs a running server about 230 MiB, see there);
 * - every import between modules goes down the order of the layers that `docs/architecture.md`
 *   writes out (read from there), but for the exceptions listed below with their reason.
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

/** The module a file belongs to: `src/<folder>` or `projections/<folder>`; a top file is its own. */
function moduleOf(file: string): string {
  const parts = file.split("/");
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : file;
}

const edges = [...sources("src"), ...sources("projections")].flatMap((file) =>
  imports(file).map((target) => ({ file, target })),
);

t.test("nothing in src imports ops", async (t) => {
  t.same(
    edges.filter((e) => e.file.startsWith("src/") && e.target.startsWith("ops/")),
    [],
  );
});

t.test("a module is imported from outside only through its index.ts", async (t) => {
  const intoPrivate = edges.filter(({ file, target }) => {
    const module = moduleOf(target);
    return module !== moduleOf(file) && module !== target && target !== `${module}/index.ts`;
  });
  t.same(
    intoPrivate.map((e) => `${e.file} → ${e.target}`),
    [],
  );
});

t.test("no feature module imports app/ or cli/", async (t) => {
  const upward = edges.filter(({ file, target }) => {
    const from = moduleOf(file);
    const to = moduleOf(target);
    const composition = (module: string) => module === "src/app" || module === "src/cli";
    return composition(to) && !composition(from) && file !== "src/cli.ts";
  });
  t.same(
    upward.map((e) => `${e.file} → ${e.target}`),
    [],
  );
});

/** A target the directives may not import: the configuration, the gateway or the plugin. */
function gatewayOrConfig(target: string): boolean {
  return (
    target.startsWith("src/config/") ||
    ["src/graphql/gateway/schema.ts", "src/graphql/plugin.ts", "src/graphql/index.ts"].includes(
      target,
    )
  );
}

t.test("the GraphQL directives import neither the gateway nor the configuration", async (t) => {
  const files = [...sources("src/graphql/gateway/directives"), "src/graphql/context.ts"];
  t.ok(files.length > 10, "the directives are found");
  const directiveEdges = files.flatMap((file) =>
    imports(file)
      .filter(gatewayOrConfig)
      .map((target) => `${file} → ${target}`),
  );
  t.same(directiveEdges, []);
  const named = files.filter((file) =>
    /\b(AnnalConfig|Gateway)\b/.test(readFileSync(path.join(ROOT, file), "utf8")),
  );
  t.same(named, [], "no directive names the Gateway or AnnalConfig type");
});

t.test("the check reads the relative imports of a file", async (t) => {
  t.ok(imports("test/support/capture.ts").filter((target) => target.startsWith("src/")).length > 0);
  // Type-only imports count too: the plugin's options have both edges a directive may not.
  t.same(imports("src/graphql/options.ts").filter(gatewayOrConfig).sort(), [
    "src/config/index.ts",
    "src/graphql/gateway/schema.ts",
  ]);
  t.equal(moduleOf("src/capture/jobs.ts"), "src/capture");
  t.equal(moduleOf("src/logger.ts"), "src/logger.ts");
});

t.test("only src/time imports date-fns or date-fns-tz", async (t) => {
  const files = [...sources("src"), ...sources("projections")].filter(
    (file) => !file.startsWith("src/time/") && !file.startsWith("src/web/client/"),
  );
  t.same(
    files.filter((file) =>
      /\bfrom\s+"date-fns(?:-tz)?(?:\/[^"]*)?"|import\("date-fns/.test(
        readFileSync(path.join(ROOT, file), "utf8"),
      ),
    ),
    [],
  );
});

/**
 * The layers, lowest first, as `docs/architecture.md` writes them in the code block of its
 * "Layers" section: `a, b → c → ...`, each name a folder of `src/`, a file at its top, or
 * `projections`.
 */
function documentedLayers(): string[][] {
  const doc = readFileSync(path.join(ROOT, "docs/architecture.md"), "utf8");
  const section = doc.slice(doc.indexOf("\n## Layers\n"));
  const block = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  return block.split("→").map((layer) =>
    layer
      .split(",")
      .map((name) => name.trim())
      .filter((name) => name !== ""),
  );
}

/** The name a file's module has in the layer order: `graphql`, `logger.ts`, `projections`. */
function layerName(file: string): string {
  const parts = file.split("/");
  if (parts[0] === "projections") return "projections";
  return parts[1]!;
}

interface Edge {
  readonly file: string;
  readonly target: string;
}

/**
 * The edges that go against the order: into a later layer, or into another module of the same
 * layer. A module missing from the order is reported by its own test, not here.
 */
function againstTheOrder(all: readonly Edge[], layers: readonly string[][]): Edge[] {
  const rank = new Map(layers.flatMap((layer, index) => layer.map((name) => [name, index])));
  return all.filter(({ file, target }) => {
    const from = layerName(file);
    const to = layerName(target);
    if (from === to) return false;
    const fromRank = rank.get(from);
    const toRank = rank.get(to);
    return fromRank !== undefined && toRank !== undefined && toRank >= fromRank;
  });
}

/** The imports against the order that stay for now, each with why. */
const ALLOWED_AGAINST_THE_ORDER: readonly { readonly edge: string; readonly reason: string }[] = [
  {
    edge: "src/rest/plugin.ts → src/http/index.ts",
    reason: "REST answers its routes' errors with the server's sendProblem (reply and log line)",
  },
  {
    edge: "src/graphql/plugin.ts → src/http/index.ts",
    reason: "GraphQL notes a refusal on the request's one log line with the server's logClassified",
  },
  {
    edge: "src/rest/openapi/document.ts → src/http/index.ts",
    reason: "the OpenAPI description states the server's URL limit, MAX_URL_LENGTH",
  },
];

const moduleEdges = edges.filter(
  ({ target }) => target.startsWith("src/") || target.startsWith("projections/"),
);

t.test("every module of src and projections has its place in the layer order", async (t) => {
  const layers = documentedLayers();
  t.ok(layers.length > 10, "the order is read from docs/architecture.md");
  const placed = new Set(layers.flat());
  const modules = new Set(
    [...sources("src"), ...sources("projections")]
      .filter((file) => !file.startsWith("src/web/client/"))
      .map(layerName),
  );
  t.same(
    [...modules].filter((name) => !placed.has(name)),
    [],
    "every module is placed",
  );
  t.same(
    [...placed].filter((name) => !modules.has(name)),
    [],
    "the order names only modules that exist",
  );
});

t.test("every import goes down the layer order of docs/architecture.md", async (t) => {
  const found = againstTheOrder(moduleEdges, documentedLayers()).map(
    (e) => `${e.file} → ${e.target}`,
  );
  const allowed = ALLOWED_AGAINST_THE_ORDER.map((a) => a.edge);
  t.same(
    [...new Set(found)].filter((edge) => !allowed.includes(edge)),
    [],
  );
  t.same(
    allowed.filter((edge) => !found.includes(edge)),
    [],
    "every allowed exception still exists (remove the ones fixed)",
  );
});

t.test("the layer check finds an import up the order or within a layer", async (t) => {
  const layers = documentedLayers();
  const upward = { file: "src/store/append.ts", target: "src/graphql/index.ts" };
  const sideways = { file: "src/rest/plugin.ts", target: "src/graphql/index.ts" };
  const downward = { file: "src/graphql/plugin.ts", target: "src/store/index.ts" };
  const inside = { file: "src/graphql/plugin.ts", target: "src/graphql/gateway/schema.ts" };
  const fromProjection = { file: "projections/entries/apply.ts", target: "src/rest/index.ts" };
  t.same(againstTheOrder([upward, sideways, downward, inside, fromProjection], layers), [
    upward,
    sideways,
    fromProjection,
  ]);
  // The classifier's old place: a channel reading errors through the HTTP server.
  t.same(
    againstTheOrder(
      [{ file: "src/hooks/ingress/plugin.ts", target: "src/http/classify.ts" }],
      layers,
    ).length,
    1,
  );
  t.equal(layerName("projections/workflows/fold.ts"), "projections");
  t.equal(layerName("src/metrics.ts"), "metrics.ts");
});

t.test(
  "the GraphQL channel maps the workflow module's views, and its operations are small",
  async (t) => {
    const files = sources("src/graphql");
    t.notOk(files.includes("src/graphql/workflows.ts"), "no one file holds every operation");
    // How an instance is read and shaped is the workflow module's (`src/workflow/read/`): the
    // channel never folds or reads an instance's state itself.
    t.same(
      files.filter((file) =>
        /\b(InstanceState|CallRecord|loadInstance|instanceAt|foldInstance)\b/.test(
          readFileSync(path.join(ROOT, file), "utf8"),
        ),
      ),
      [],
    );
    const operations = sources("src/graphql/operations");
    t.ok(operations.length >= 5, "one file per operation family");
    t.same(
      operations.filter(
        (file) => readFileSync(path.join(ROOT, file), "utf8").split("\n").length > 250,
      ),
      [],
      "each under 250 lines",
    );
  },
);
