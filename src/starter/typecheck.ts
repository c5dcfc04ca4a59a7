import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { AnnalError } from "../errors/index.ts";
import { PACKAGE_ROOT } from "../package-root.ts";

type TypeScript = typeof import("typescript");
type CompilerHost = import("typescript").CompilerHost;
type CompilerOptions = import("typescript").CompilerOptions;
type SourceFile = import("typescript").SourceFile;

/** One error the type checker found, where it is. */
export interface TypeProblem {
  /** `exercises/01-first-step/workflow.ts:12:5`, relative to the project. */
  readonly at: string;
  /** `TS2322: Type 'string' is not assignable to type 'number'.` (its first line). */
  readonly message: string;
}

/**
 * Type-checks `files` (relative to `cwd`) with the project's TypeScript and its tsconfig.json,
 * and returns the errors in those files, in order. Only the files themselves are checked:
 * what they import is read for its types, not checked again (annal's own code, a helper).
 *
 * @throws AnnalError `ANNAL_EXERCISE_TYPECHECK_UNAVAILABLE` when TypeScript is not installed.
 */
export function typecheckFiles(cwd: string, files: readonly string[]): TypeProblem[] {
  const ts = loadTypeScript(cwd);
  const options = compilerOptions(ts, cwd);
  const roots = files.map((file) => path.resolve(cwd, file));
  const program = ts.createProgram({
    rootNames: roots,
    options,
    host: cachingHost(ts, cwd, options),
  });
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...roots.flatMap((root) => {
      const source = program.getSourceFile(root);
      return source
        ? [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]
        : [];
    }),
  ].filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error);
  return diagnostics.map((diagnostic) => {
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n").split("\n")[0]!;
    const message = `TS${diagnostic.code}: ${text}`;
    if (!diagnostic.file || diagnostic.start === undefined) return { at: "tsconfig.json", message };
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    const file = path.relative(cwd, diagnostic.file.fileName);
    return { at: `${file}:${line + 1}:${character + 1}`, message };
  });
}

/** What the files parsed in this process were parsed from, and for which project. */
let parsed:
  | {
      readonly key: string;
      readonly files: Map<string, { readonly text: string; readonly file: SourceFile }>;
    }
  | undefined;

/**
 * A compiler host that keeps every file it parsed, and hands a later type-check in the same
 * process (the next task, the same one after an edit) the same parsed and bound file when its
 * text has not changed. A type-check reads about a thousand declaration files (annal's, its
 * dependencies', Node.js's) for the two files of a task; parsing them is most of its time, and
 * the second check of a process parses only the task's files.
 */
function cachingHost(ts: TypeScript, cwd: string, options: CompilerOptions): CompilerHost {
  const key = `${cwd}\0${JSON.stringify(options)}`;
  if (parsed?.key !== key) parsed = { key, files: new Map() };
  const files = parsed.files;
  const host = ts.createCompilerHost(options, true);
  const parse = host.getSourceFile.bind(host);
  host.getCurrentDirectory = () => cwd;
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreateNewSourceFile) => {
    const text = host.readFile(fileName);
    const kept = files.get(fileName);
    if (text !== undefined && kept?.text === text && !shouldCreateNewSourceFile) return kept.file;
    const file = parse(fileName, languageVersion, onError, shouldCreateNewSourceFile);
    if (file && text !== undefined) files.set(fileName, { text, file });
    return file;
  };
  return host;
}

/** The project's TypeScript (its devDependency), else the one annal was installed beside. */
function loadTypeScript(cwd: string): TypeScript {
  for (const from of [cwd, PACKAGE_ROOT]) {
    try {
      return createRequire(path.join(from, "package.json"))("typescript") as TypeScript;
    } catch {
      // not there: try the next place
    }
  }
  throw new AnnalError(
    "ANNAL_EXERCISE_TYPECHECK_UNAVAILABLE",
    `TypeScript is not installed in ${cwd} (node_modules/typescript)`,
  );
}

/** The project's tsconfig.json's options, or the ones `annal init` writes when it has none. */
function compilerOptions(ts: TypeScript, cwd: string) {
  const file = path.join(cwd, "tsconfig.json");
  const json = existsSync(file)
    ? ts.readConfigFile(file, (name) => ts.sys.readFile(name))
    : { config: { compilerOptions: DEFAULTS } };
  if (json.error) {
    const text = ts.flattenDiagnosticMessageText(json.error.messageText, "\n");
    throw new AnnalError("ANNAL_EXERCISE_TYPE_ERROR", `tsconfig.json: ${text}`);
  }
  // Named, so that `types` resolves from the project whatever the process's directory.
  const config = ts.parseJsonConfigFileContent(json.config, ts.sys, cwd, undefined, file);
  return { ...config.options, noEmit: true };
}

const DEFAULTS = {
  target: "es2024",
  module: "nodenext",
  moduleResolution: "nodenext",
  types: ["node"],
  strict: true,
  skipLibCheck: true,
  allowImportingTsExtensions: true,
  erasableSyntaxOnly: true,
  verbatimModuleSyntax: true,
};
