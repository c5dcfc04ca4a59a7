/** DNs as text, without the DOM: what the pages and the tests in Node share. */

/** Whether a value reads as a DN (`uid=a,ou=people,...`): at least two `name=value` parts. */
export const looksLikeDn = (value: string): boolean =>
  /^[A-Za-z][\w.-]*=[^,]+,[A-Za-z][\w.-]*=/.test(value);

/** DNs compare without case and without spaces around the separators. */
export const dnKey = (dn: string): string => dn.replace(/\s*([,=+])\s*/g, "$1").toLowerCase();

/**
 * The keys a workflow's data view shows, and the names of those that hold a DN: a workflow
 * that gives an entry's DN and its name beside it (`group` and `groupName`) shows the entry
 * once, by that name, with the DN on hover.
 *
 * @example
 * namedKeys({ group: "cn=on-call,ou=groups,dc=example,dc=org", groupName: "on-call", reason: "…" })
 * // { shown: ["group", "reason"], names: Map { "group" => "on-call" } }
 */
export function namedKeys(data: Readonly<Record<string, unknown>>): {
  shown: string[];
  names: Map<string, string>;
} {
  const names = new Map<string, string>();
  const hidden = new Set<string>();
  for (const [key, value] of Object.entries(data)) {
    if (typeof value !== "string" || !looksLikeDn(value)) continue;
    for (const nameKey of [`${key}Name`, `${key}_name`, `${key}DisplayName`]) {
      const name = data[nameKey];
      if (typeof name === "string" && name !== "") {
        names.set(key, name);
        hidden.add(nameKey);
        break;
      }
    }
  }
  return { shown: Object.keys(data).filter((key) => !hidden.has(key)), names };
}
