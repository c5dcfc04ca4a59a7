import type { TomlTable } from "smol-toml";
import { isTable } from "./env-references.ts";
import { formatKeyPath } from "./key-path.ts";

/**
 * Environment variables that override a key of the file, by the conventions of the platforms
 * annal is deployed on. A variable set to the empty string counts as unset. The value goes
 * through the same schema as the file's, so `PORT=http` fails like `port = "http"` would.
 */
export const ENV_OVERRIDES: readonly {
  readonly variable: string;
  readonly key: readonly string[];
}[] = [
  { variable: "DATABASE_URL", key: ["database", "url"] },
  { variable: "PORT", key: ["server", "port"] },
];

export interface Overridden {
  readonly table: TomlTable;
  /** Key path (`server.port`) → the variable that set it (`PORT`). */
  readonly origins: ReadonlyMap<string, string>;
}

export function applyEnvOverrides(
  table: TomlTable,
  env: Readonly<Record<string, string | undefined>>,
): Overridden {
  const origins = new Map<string, string>();
  let result = table;
  for (const { variable, key } of ENV_OVERRIDES) {
    const value = env[variable];
    if (value === undefined || value === "") continue;
    const updated = setIn(result, key, value);
    if (updated === undefined) continue; // a section that is not a table: the schema says so
    result = updated;
    origins.set(formatKeyPath(key), variable);
  }
  return { table: result, origins };
}

/** A copy of `table` with `value` at `path`, creating tables on the way; undefined if blocked. */
function setIn(table: TomlTable, path: readonly string[], value: string): TomlTable | undefined {
  const [key, ...rest] = path;
  if (key === undefined) return undefined;
  if (rest.length === 0) return { ...table, [key]: value };
  const child = table[key] ?? {};
  if (!isTable(child)) return undefined;
  const updated = setIn(child, rest, value);
  return updated === undefined ? undefined : { ...table, [key]: updated };
}
