const BARE_KEY = /^[A-Za-z0-9_-]+$/;

/**
 * Writes a path into the configuration the way a user reads it in the file:
 * `["rest", 0, "password"]` → `rest[0].password`. A key that TOML would have to quote is
 * quoted: `["a.b"]` → `"a.b"`.
 */
export function formatKeyPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") {
      text += `[${segment}]`;
      continue;
    }
    const key = String(segment);
    const written = BARE_KEY.test(key) ? key : JSON.stringify(key);
    text += text === "" ? written : `.${written}`;
  }
  return text;
}
