import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { AnnalError } from "../errors/index.ts";
import { PACKAGE_ROOT } from "../package-root.ts";
import { packIntoProject, runsFromCheckout } from "./vendor.ts";

/** The template project, data beside the code like `ops/demo/`. */
export const TEMPLATE_DIR = path.join(PACKAGE_ROOT, "starter");

/**
 * The template's own files, each by name (test/starter/init.test.ts holds the list to what git
 * tracks under starter/): a file left beside them by hand is not copied into every project.
 */
export const STARTER_FILES: readonly string[] = [
  "README.md",
  "annal.toml",
  "env.example",
  "gitignore",
  "tsconfig.json",
  "hooks/README.md",
  "tests/welcome.test.ts",
  "workflows/welcome.ts",
  "exercises/README.md",
  ...[
    "01-first-step",
    "02-dialog-escalation",
    "03-request-answer",
    "04-child-workflow",
    "05-business-deadline",
    "06-compensation",
  ].flatMap((task) =>
    ["README.md", "workflow.test.ts", "workflow.ts"].map((file) => `exercises/${task}/${file}`),
  ),
];

/**
 * The demo's HR and ticket hooks and the workflows they start (joiner, leaver, default-groups,
 * and the access request), copied into every new project from `ops/demo/`, where `npm start`
 * runs them: one copy of them in the package. A new project thus runs what `annal refresh`
 * drives and what the README's tutorial shows, as files of its own to read and change. Each
 * by name, as STARTER_FILES: a scratch workflow left in ops/demo/workflows/ stays there.
 */
export const FROM_DEMO: readonly (readonly [from: string, to: string])[] = [
  ...["_employees.ts", "hr.ts", "tickets.ts"].map(
    (file) => [`ops/demo/hooks/${file}`, `hooks/${file}`] as const,
  ),
  ...[
    "access-request.ts",
    "default-groups.ts",
    "joiner.ts",
    "leaver.ts",
    "shared/directory.ts",
    "shared/outbox.ts",
  ].map((file) => [`ops/demo/workflows/${file}`, `workflows/${file}`] as const),
];

/**
 * Files the template keeps under another name: npm leaves a package's `.gitignore` out of its
 * tarball, and a dot file is easy to lose in a copy.
 */
const RENAMED: Readonly<Record<string, string>> = {
  gitignore: ".gitignore",
  "env.example": ".env.example",
};

/** The versions a new project pins: the Node.js and TypeScript annal itself is built with. */
interface PackageVersions {
  readonly annal: string;
  readonly node: string;
  readonly typescript: string;
  readonly typesNode: string;
  readonly zod: string;
  readonly allowScripts: Readonly<Record<string, boolean>>;
}

export interface InitOptions {
  /** The directory to write the project into: new, or empty. */
  readonly dir: string;
  /**
   * How the project's package.json asks for annal. Default: from a checkout, this checkout
   * packed into the project's `vendor/` (`file:./vendor/annal-<version>.tgz`: annal is on no
   * registry); from an installed annal, `^<this version>`.
   */
  readonly annal?: string;
  /** Where init says what it does that takes a while (the pack). */
  readonly say?: (line: string) => void;
}

/**
 * `annal init <dir>`: writes a project that has annal as its dependency: package.json
 * (`npm start`, `npm test`), annal.toml (every secret a `${VARIABLE}`) with .env.example,
 * workflows/ with an example definition and the demo's, tests/ with its workflow tests,
 * hooks/ with the demo's HR and ticket hooks, exercises/, a README and a .gitignore. Returns the files written, relative to `dir`.
 *
 * @throws AnnalError `ANNAL_INIT_DIRECTORY_NOT_EMPTY` when `dir` holds anything.
 */
export async function initProject(options: InitOptions): Promise<string[]> {
  const dir = path.resolve(options.dir);
  const present = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw error;
  });
  if (present.length > 0) {
    throw new AnnalError(
      "ANNAL_INIT_DIRECTORY_NOT_EMPTY",
      `${options.dir} is not empty (${present.slice(0, 3).join(", ")}${present.length > 3 ? ", ..." : ""})`,
    );
  }
  await mkdir(dir, { recursive: true });
  const copies: (readonly [from: string, to: string])[] = [
    ...STARTER_FILES.map((file) => [path.join(TEMPLATE_DIR, file), RENAMED[file] ?? file] as const),
    ...FROM_DEMO.map(([from, to]) => [path.join(PACKAGE_ROOT, from), to] as const),
  ];
  for (const [from, to] of copies) {
    await mkdir(path.dirname(path.join(dir, to)), { recursive: true });
    await copyFile(from, path.join(dir, to));
  }
  const annal =
    options.annal ??
    (runsFromCheckout() ? await packIntoProject(dir, options.say ?? (() => {})) : undefined);
  const versions = await packageVersions(annal);
  await writeFile(
    path.join(dir, "package.json"),
    `${JSON.stringify(projectManifest(path.basename(dir), versions), null, 2)}\n`,
  );
  const written = await readdir(dir, { recursive: true, withFileTypes: true });
  return written
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** The new project's package.json. */
export function projectManifest(name: string, versions: PackageVersions): Record<string, unknown> {
  return {
    name: name.toLowerCase().replace(/[^a-z0-9-._~]/g, "-"),
    version: "0.1.0",
    private: true,
    type: "module",
    scripts: {
      start: "annal start",
      test: "annal test",
      verify: "annal verify",
      annal: "annal",
    },
    dependencies: { annal: versions.annal, zod: versions.zod },
    devDependencies: {
      // npm scripts run on the Node.js this pins (annal needs 26), whatever the machine has.
      node: versions.node,
      typescript: versions.typescript,
      "@types/node": versions.typesNode,
    },
    engines: { node: ">=26" },
    // The install scripts annal needs: Node.js itself, esbuild's binary, PostgreSQL's links.
    allowScripts: versions.allowScripts,
  };
}

async function packageVersions(annal: string | undefined): Promise<PackageVersions> {
  const manifest = JSON.parse(await readFile(path.join(PACKAGE_ROOT, "package.json"), "utf8")) as {
    version: string;
    dependencies: Record<string, string>;
    devDependencies?: Record<string, string>;
    allowScripts?: Record<string, boolean>;
  };
  const pinned = (name: string, fallback: string) =>
    manifest.devDependencies?.[name] ?? manifest.dependencies[name] ?? fallback;
  return {
    annal: annal ?? `^${manifest.version}`,
    node: pinned("node", "26"),
    typescript: pinned("typescript", "6"),
    typesNode: pinned("@types/node", "26"),
    zod: pinned("zod", "4"),
    allowScripts: manifest.allowScripts ?? {},
  };
}
