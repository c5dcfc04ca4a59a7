import type { TomlTable, TomlValue } from "smol-toml";
import { formatKeyPath } from "./key-path.ts";

/**
 * `${NAME}` and `${NAME:-default}` references to environment variables in string values.
 *
 * - `${NAME}` is replaced by the variable's value; a variable that is not set is an error
 *   (a variable set to the empty string gives the empty string).
 * - `${NAME:-default}` is replaced by the variable's value, or by `default` when the variable is
 *   unset or empty, as in the shell. The default is taken literally (no references inside it)
 *   and cannot contain `}`. It lives in the file, so it is for values that are no secret,
 *   such as the demo directory's password.
 * - `$${` stands for a literal `${`.
 * - Any other `${` is an error, so a typo never passes through as text.
 */

const NAME = "[A-Za-z_][A-Za-z0-9_]*";
// A whole value that is one reference, default or not: what a secret must be.
const WHOLE_REFERENCE = new RegExp(`^\\$\\{${NAME}(?::-[^}]*)?\\}$`);
// `$${` first, so an escaped reference is never read as one.
const TOKEN = /\$\$\{|\$\{([^}]*)(\})?/g;
const BODY = new RegExp(`^(${NAME})(?::-([^}]*))?$`);

export function isEnvReference(value: unknown): boolean {
  return typeof value === "string" && WHOLE_REFERENCE.test(value);
}

export interface MissingVariable {
  readonly name: string;
  readonly key: string;
}

export interface Expansion {
  readonly table: TomlTable;
  /** Each variable that was referred to without a default and is not set, with where. */
  readonly missing: readonly MissingVariable[];
  /** Key paths of values holding a `${` that is neither a reference nor escaped. */
  readonly malformed: readonly string[];
}

/** Replaces the references in every string value of `table`, at any depth; keys are left alone. */
export function expandEnvReferences(
  table: TomlTable,
  env: Readonly<Record<string, string | undefined>>,
): Expansion {
  const missing: MissingVariable[] = [];
  const malformed: string[] = [];

  const expandString = (text: string, path: readonly PropertyKey[]): string => {
    let isMalformed = false;
    const expanded = text.replace(TOKEN, (token, body: string | undefined, close?: string) => {
      if (token === "$${") return "${";
      const reference = close === undefined ? null : BODY.exec(body ?? "");
      const name = reference?.[1];
      if (reference === null || name === undefined) {
        isMalformed = true;
        return token;
      }
      const value = env[name];
      const fallback = reference[2];
      if (fallback !== undefined) return value === undefined || value === "" ? fallback : value;
      if (value === undefined) {
        missing.push({ name, key: formatKeyPath(path) });
        return token;
      }
      return value;
    });
    if (isMalformed) malformed.push(formatKeyPath(path));
    return expanded;
  };

  const expand = (value: TomlValue, path: readonly PropertyKey[]): TomlValue => {
    if (typeof value === "string") return expandString(value, path);
    if (Array.isArray(value)) return value.map((item, index) => expand(item, [...path, index]));
    if (isTable(value)) return expandTable(value, path);
    return value;
  };

  const expandTable = (source: TomlTable, path: readonly PropertyKey[]): TomlTable => {
    return Object.fromEntries(
      Object.entries(source).map(([key, value]) => [key, expand(value, [...path, key])]),
    );
  };

  return { table: expandTable(table, []), missing, malformed };
}

/** A TOML table, as opposed to an array, a date or a scalar. */
export function isTable(value: TomlValue): value is TomlTable {
  return typeof value === "object" && !Array.isArray(value) && !(value instanceof Date);
}
