/**
 * The suite's one way to wait for a condition: polls `check` until it returns something
 * truthy, then returns it. Past `timeout` it throws with `what` and the last value seen, so a
 * failing test says what it was waiting for instead of asserting on a stale value.
 *
 * @example
 * const row = await eventually(() => findChange(pool, id), { what: "the change is recorded" });
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  options: { timeout?: number; interval?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const timeout = options.timeout ?? 15_000;
  const interval = options.interval ?? 25;
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) {
      throw new Error(
        `eventually: ${options.what ?? "condition"} not met within ${timeout} ms (last: ${describe(value)})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
