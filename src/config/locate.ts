import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { AnnalError } from "../errors/index.ts";
import { PACKAGE_ROOT } from "../package-root.ts";

/** The bundled demo configuration, used when nothing else is found. */
export const DEMO_CONFIG_PATH = resolve(PACKAGE_ROOT, "ops/demo/annal.toml");

export interface LocatedConfig {
  /** Absolute path of the file to read. */
  readonly path: string;
  /** What named it, when the user (or caller) did; a missing named file is an error. */
  readonly namedBy: "configPath" | "--config" | "ANNAL_CONFIG" | undefined;
}

/**
 * Which file to read, first match wins: the `configPath` option; `--config <path>` or
 * `--config=<path>` in argv (the last one, if repeated; nothing after `--` is read);
 * the `ANNAL_CONFIG` environment variable; `annal.toml` in the working directory; the demo
 * configuration. Relative paths resolve against `cwd`.
 */
export async function locateConfig(options: {
  argv: readonly string[];
  configPath: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
}): Promise<LocatedConfig> {
  const { cwd } = options;
  if (options.configPath !== undefined && options.configPath !== "") {
    return { path: resolve(cwd, options.configPath), namedBy: "configPath" };
  }
  const fromArgv = configArgument(options.argv);
  if (fromArgv !== undefined) return { path: resolve(cwd, fromArgv), namedBy: "--config" };
  const fromEnv = options.env["ANNAL_CONFIG"];
  if (fromEnv !== undefined && fromEnv !== "") {
    return { path: resolve(cwd, fromEnv), namedBy: "ANNAL_CONFIG" };
  }
  const inCwd = resolve(cwd, "annal.toml");
  if (await exists(inCwd)) return { path: inCwd, namedBy: undefined };
  return { path: DEMO_CONFIG_PATH, namedBy: undefined };
}

export function isDemoConfigPath(path: string, cwd: string): boolean {
  return resolve(cwd, path) === DEMO_CONFIG_PATH;
}

function configArgument(argv: readonly string[]): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") break;
    if (arg === "--config") {
      found = argv[i + 1];
      if (found === undefined || found === "" || found.startsWith("--")) throw missingPath();
      i++;
    } else if (arg?.startsWith("--config=")) {
      found = arg.slice("--config=".length);
      if (found === "") throw missingPath();
    }
  }
  return found;
}

function missingPath(): AnnalError {
  return new AnnalError("ANNAL_CONFIG_INVALID", "--config needs a path", {
    hint: "write --config <path> or --config=<path>",
    status: 400,
  });
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
