import { eventually } from "./eventually.ts";

/**
 * Waits until the wall clock has moved into a later second than `after` (default: now) and
 * returns that moment. LDAP stamps changes with whole seconds (slapd's `reqStart`,
 * `modifyTimestamp`), so a test that needs two changes, or a change and a moment it asks
 * about, to fall in different seconds waits for the clock itself, not a fixed time.
 *
 * @example
 * await f.sync(); // the add is stamped with the current second
 * const between = await nextSecond(); // a moment in a later second than the add
 * await nextSecond(between); // the modify is stamped with a later second still
 */
export function nextSecond(after: Date | number = Date.now()): Promise<Date> {
  const second = Math.floor(Number(after) / 1000);
  return eventually(
    () => {
      const now = Date.now();
      return Math.floor(now / 1000) > second ? new Date(now) : undefined;
    },
    { what: `the clock to pass ${new Date(second * 1000).toISOString()}`, interval: 5 },
  );
}
