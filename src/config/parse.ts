import { dirname, resolve } from "node:path";
import { parse as parseToml, TomlError, type TomlTable } from "smol-toml";
import type { z } from "zod";
import { expandEnvReferences } from "./env-references.ts";
import { ConfigError } from "./errors.ts";
import { isDemoConfigPath } from "./locate.ts";
import { applyEnvOverrides } from "./overrides.ts";
import { configSchema, type ConfigSchema } from "./schema.ts";
import { findSecretLiterals } from "./secrets.ts";
import { resolveBase } from "./server-url.ts";
import { validateConfig } from "./validate.ts";

/** Which file the configuration came from. */
export interface ConfigSource {
  /** The file read, absolute when it came through `loadConfig`. */
  readonly path: string;
  /** True when it is the bundled demo configuration, `ops/demo/annal.toml`. */
  readonly demo: boolean;
}

/** The resolved configuration: every default applied, durations in ms, paths absolute. */
export type AnnalConfig = { source: ConfigSource } & z.output<ConfigSchema>;

export interface ParseSource {
  /** Named in error messages and recorded in `source.path`. */
  path: string;
  /** Where `${NAME}` references, `DATABASE_URL` and `PORT` are read from. */
  env: Readonly<Record<string, string | undefined>>;
  /** Relative paths in the file resolve against this. Default `process.cwd()`. */
  cwd?: string;
}

/**
 * Turns the text of an `annal.toml` into an `AnnalConfig`, in this order: TOML syntax; secret
 * keys must be environment references (checked on the text as written); references are
 * replaced; `DATABASE_URL` and `PORT` override; the schema checks and resolves.
 *
 * @example
 * const config = parseConfig('[server]\nport = 8080\n', { path: "annal.toml", env: {} });
 * config.server.port; // 8080
 *
 * @throws ConfigError with one of the `ANNAL_CONFIG_*` codes.
 */
export function parseConfig(text: string, source: ParseSource): AnnalConfig {
  const file = source.path;
  const cwd = source.cwd ?? process.cwd();
  const raw = readToml(text, file);

  const literals = findSecretLiterals(raw);
  if (literals.length > 0) {
    throw new ConfigError(
      "ANNAL_CONFIG_SECRET_LITERAL",
      `${literals.join(", ")} in ${file} ${literals.length === 1 ? "holds a secret" : "hold secrets"} written into the file`,
      {
        file,
        keys: literals,
        hint: 'keep secrets out of the file: put the secret in an environment variable and refer to it, e.g. password = "${LDAP_PASSWORD}"',
      },
    );
  }

  const expansion = expandEnvReferences(raw, source.env);
  if (expansion.malformed.length > 0) {
    throw new ConfigError(
      "ANNAL_CONFIG_INVALID",
      `${expansion.malformed.join(", ")} in ${file}: "\${" does not start a valid environment reference`,
      {
        file,
        keys: expansion.malformed,
        hint: "a reference is ${NAME} or ${NAME:-default}, NAME being letters, digits and _; write $${ for a literal ${",
      },
    );
  }
  if (expansion.missing.length > 0) {
    const names = [...new Set(expansion.missing.map(({ name }) => name))];
    const uses = expansion.missing.map(({ name, key }) => `${name} (for ${key})`);
    throw new ConfigError(
      "ANNAL_CONFIG_ENV_MISSING",
      `${file} refers to ${names.length === 1 ? "an environment variable that is" : "environment variables that are"} not set: ${uses.join(", ")}`,
      {
        file,
        keys: expansion.missing.map(({ key }) => key),
        hint: `set ${names.join(", ")} in the environment annal runs in`,
      },
    );
  }

  const { table, origins } = applyEnvOverrides(expansion.table, source.env);
  const config = validateConfig(
    configSchema({ cwd, configDir: dirname(resolve(cwd, file)) }),
    table,
    file,
    origins,
  );
  const graphql = {
    ...config.graphql,
    // A base written as a path is annal itself: resolved once the server's port is known.
    rest: config.graphql.rest.map((backend) => {
      const base = resolveBase(backend.base, config.server);
      return { ...backend, base, options: { ...backend.options, base } };
    }),
  };
  return { source: { path: file, demo: isDemoConfigPath(file, cwd) }, ...config, graphql };
}

function readToml(text: string, file: string): TomlTable {
  try {
    return parseToml(text);
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    // The library's message ends in a copy of the offending lines, which may hold a secret:
    // keep only its first line, and do not chain the error as the cause.
    const reason = (error.message.split("\n")[0] ?? "").replace(/^Invalid TOML document: /, "");
    throw new ConfigError(
      "ANNAL_CONFIG_SYNTAX",
      `${file}:${error.line}:${error.column}: not valid TOML: ${reason}`,
      {
        file,
        line: error.line,
        column: error.column,
        hint: "fix the file at that line and column (TOML reference: https://toml.io/en/v1.0.0)",
      },
    );
  }
}
