import {
  armPausePoint as arm,
  type ArmedPausePoint,
  type PausePointName,
} from "../../src/pause-points.ts";

/**
 * Arms a pause point (src/pause-points.ts) for test `t` and releases it when `t` ends, so
 * that neither an armed point nor an actor stopped at one outlives the test.
 *
 * @example
 * const point = armPausePoint(t, "store.append.afterInsert", { subject: "a" });
 * const appending = store.appendToStream("a", events);
 * await point.reached();
 * // ... act while the append to "a" is in flight ...
 * point.release();
 */
export function armPausePoint(
  t: { teardown(fn: () => unknown): void },
  name: PausePointName,
  options: { subject?: string } = {},
): ArmedPausePoint {
  const point = arm(name, options);
  t.teardown(() => point.release());
  return point;
}
