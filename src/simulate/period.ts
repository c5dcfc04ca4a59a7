import { AnnalError } from "../errors/index.ts";
import { type Clock, readMoment } from "../time/index.ts";

/** The past period a simulation replays: from `from` to `to`, both included. */
export interface Period {
  readonly from: Date;
  readonly to: Date;
}

/**
 * Reads `--from` and `--to` in the one grammar of moments (`2026-11-20T10:00:00Z`, `now-7d`,
 * `yesterday`), on `clock`.
 *
 * @throws AnnalError `ANNAL_SIMULATE_PERIOD_INVALID` for a missing or unreadable moment, or a
 *   `to` before `from`.
 */
export function readPeriod(from: string | undefined, to: string | undefined, clock: Clock): Period {
  const start = simulationMoment(from, "--from", clock);
  const end = simulationMoment(to, "--to", clock);
  if (end.getTime() < start.getTime()) {
    throw new AnnalError(
      "ANNAL_SIMULATE_PERIOD_INVALID",
      `--to ${end.toISOString()} lies before --from ${start.toISOString()}`,
      { details: { from: start.toISOString(), to: end.toISOString() } },
    );
  }
  return { from: start, to: end };
}

/**
 * One moment of a simulation (`--from`, `--to`, `--at`).
 *
 * @throws AnnalError `ANNAL_SIMULATE_PERIOD_INVALID` naming the option.
 */
export function simulationMoment(text: string | undefined, option: string, clock: Clock): Date {
  if (text === undefined || text.trim() === "") {
    throw new AnnalError("ANNAL_SIMULATE_PERIOD_INVALID", `${option} is missing`);
  }
  const reading = readMoment(text, clock);
  if (reading.moment === undefined) {
    throw new AnnalError("ANNAL_SIMULATE_PERIOD_INVALID", `${option}: ${reading.problem}`);
  }
  return reading.moment;
}
