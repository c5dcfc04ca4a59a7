/**
 * How deeply arrays and objects nest in a JSON value, found without recursion: a client's
 * variables nested thousands deep must be refused before graphql-js coerces them (which
 * recurses, and would overflow the stack).
 */
export function valueDepth(value: unknown, stopAt = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const { value: item, depth } = pending.pop()!;
    if (item === null || typeof item !== "object") continue;
    const level = depth + 1;
    if (level > deepest) deepest = level;
    if (deepest > stopAt) return deepest;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === "object") pending.push({ value: child, depth: level });
    }
  }
  return deepest;
}
