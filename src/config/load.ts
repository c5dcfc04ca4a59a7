import { readFile } from "node:fs/promises";
import { ConfigError } from "./errors.ts";
import { locateConfig, type LocatedConfig } from "./locate.ts";
import { type AnnalConfig, parseConfig } from "./parse.ts";

export interface LoadConfigOptions {
  /** Command-line arguments to look for `--config` in. Default `process.argv.slice(2)`. */
  argv?: readonly string[];
  /** A file chosen by the caller; wins over everything else. */
  configPath?: string;
  /** Environment for `ANNAL_CONFIG`, `${NAME}` references and overrides. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Directory relative paths resolve against. Default `process.cwd()`. */
  cwd?: string;
}

/**
 * Finds, reads and resolves the configuration. See `locateConfig` for which file is read
 * and `parseConfig` for what happens to it.
 *
 * @example
 * const config = await loadConfig({ argv: process.argv.slice(2) });
 * if (config.source.demo) console.error("annal: running the demo configuration");
 *
 * @throws ConfigError `ANNAL_CONFIG_NOT_FOUND` when a file named by `--config`, `ANNAL_CONFIG`
 *   or `configPath` does not exist, or any error of `parseConfig`.
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<AnnalConfig> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const located = await locateConfig({
    argv: options.argv ?? process.argv.slice(2),
    configPath: options.configPath,
    env,
    cwd,
  });
  const text = await readConfigFile(located);
  return parseConfig(text, { path: located.path, env, cwd });
}

async function readConfigFile({ path, namedBy }: LocatedConfig): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      const by = namedBy === undefined ? "" : ` (named by ${namedBy})`;
      throw new ConfigError("ANNAL_CONFIG_NOT_FOUND", `no configuration file at ${path}${by}`, {
        file: path,
        hint: "check the path; without --config and ANNAL_CONFIG, annal reads ./annal.toml, or runs the demo configuration when there is none",
        cause: error,
      });
    }
    throw new ConfigError("ANNAL_CONFIG_UNREADABLE", `cannot read ${path}: ${code ?? "error"}`, {
      file: path,
      hint: "check that it is a file annal's user can read",
      cause: error,
    });
  }
}
