import type { TomlTable, TomlValue } from "smol-toml";
import { isEnvReference, isTable } from "./env-references.ts";
import { formatKeyPath } from "./key-path.ts";

/**
 * Keys whose value is a secret, in any section and at any depth (compared case-insensitively).
 * Such a value must be a reference to an environment variable (`${LDAP_PASSWORD}`), never the
 * secret itself: configuration files get committed, copied and pasted into tickets.
 */
export const SECRET_KEYS: readonly string[] = [
  "password",
  "clientSecret",
  "signingKey",
  "keyPassphrase",
];

const secretKeys = new Set(SECRET_KEYS.map((key) => key.toLowerCase()));

/**
 * The key paths of secret keys whose raw value is not a reference, e.g. `directory.password`
 * or `rest[0].password`. Runs on the file as written, before references are replaced.
 */
export function findSecretLiterals(table: TomlTable): string[] {
  const found: string[] = [];
  const visit = (value: TomlValue, path: readonly PropertyKey[]): void => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => visit(item, [...path, index]));
    } else if (isTable(value)) {
      for (const [key, item] of Object.entries(value)) {
        const keyPath = [...path, key];
        if (secretKeys.has(key.toLowerCase()) && !isEnvReference(item)) {
          found.push(formatKeyPath(keyPath));
        } else {
          visit(item, keyPath);
        }
      }
    }
  };
  visit(table, []);
  return found;
}
