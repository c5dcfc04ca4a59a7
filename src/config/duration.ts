import { AnnalError } from "../errors/index.ts";

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS;

// `ms` before `m` and `s`, so "5ms" reads as milliseconds, not as minutes followed by junk.
const DURATION = /^(?:\d+(?:ms|s|m|h|d))+$/;
const PART = /(\d+)(ms|s|m|h|d)/g;

/**
 * Parses a duration to milliseconds: a whole number with a unit (`ms`, `s`, `m`, `h`, `d`).
 * Parts may be combined, largest unit first; `"0"` alone means zero.
 *
 * @example
 * parseDuration("500ms"); // 500
 * parseDuration("2s"); // 2000
 * parseDuration("1h30m"); // 5400000
 * parseDuration("0"); // 0
 *
 * @throws AnnalError `ANNAL_DURATION_INVALID` for anything else.
 */
export function parseDuration(text: string): number {
  if (text === "0") return 0;
  if (!DURATION.test(text)) throw invalidDuration(text);
  let total = 0;
  let previousUnitMs = Infinity;
  for (const [, amount, unit] of text.matchAll(PART)) {
    const unitMs = UNIT_MS[unit as Unit];
    // "30m1h" or "1s1s" is more likely a slip than a sum anyone meant.
    if (unitMs >= previousUnitMs) throw invalidDuration(text);
    previousUnitMs = unitMs;
    total += Number(amount) * unitMs;
  }
  if (!Number.isSafeInteger(total)) throw invalidDuration(text);
  return total;
}

function invalidDuration(text: string): AnnalError {
  return new AnnalError("ANNAL_DURATION_INVALID", `"${text}" is not a duration`, {
    hint: 'write a whole number with a unit, largest first: "500ms", "2s", "5m", "1h", "1d", "1h30m"; "0" for none',
    status: 400,
  });
}
