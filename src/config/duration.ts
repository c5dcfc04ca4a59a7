import { AnnalError } from "../errors/index.ts";
import { durationMs, EXACT_DURATION_FORMS } from "../time/index.ts";

/**
 * Parses a duration to milliseconds, in the one grammar of `src/time/`: compact (`500ms`,
 * `2s`, `5m`, `1h`, `3d`, `1w`, parts combined largest first: `1h30m`) or ISO 8601 (`PT5M`,
 * `P3D`, `P1W`, `P1DT12H`); `"0"` alone means zero. Months and years are no fixed length
 * and are refused.
 *
 * @example
 * parseDuration("500ms"); // 500
 * parseDuration("1h30m"); // 5400000
 * parseDuration("1w"); // 604800000
 * parseDuration("PT5M"); // 300000
 * parseDuration("0"); // 0
 *
 * @throws AnnalError `ANNAL_DURATION_INVALID` for anything else.
 */
export function parseDuration(text: string): number {
  const ms = durationMs(text);
  if (ms === undefined) throw invalidDuration(text);
  return ms;
}

function invalidDuration(text: string): AnnalError {
  return new AnnalError("ANNAL_DURATION_INVALID", `"${text}" is not a duration`, {
    hint: `write ${EXACT_DURATION_FORMS}; "0" for none`,
    status: 400,
  });
}
