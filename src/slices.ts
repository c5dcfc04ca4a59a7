import { setImmediate as turn } from "node:timers/promises";

/**
 * Work over a large value (a group of 400,000 members is one entry) written once as a
 * generator that yields at points where it may be paused, and run in one of two ways: to its
 * end at once (`runToEnd`), or in slices with a turn of the event loop at each yield
 * (`runInSlices`), so that no single step holds the loop while requests wait.
 *
 * @example
 * function* sum(values: number[]): Slices<number> {
 *   let total = 0;
 *   for (let i = 0; i < values.length; i++) {
 *     total += values[i]!;
 *     if (i % SLICE_VALUES === SLICE_VALUES - 1) yield;
 *   }
 *   return total;
 * }
 * runToEnd(sum(small));          // synchronously
 * await runInSlices(sum(large)); // a turn of the loop every SLICE_VALUES values
 */
export type Slices<T> = Generator<void, T, void>;

/**
 * Values handled between two turns of the event loop: decoding 10,000 values of a group
 * (bytes to text, a Buffer each) held the loop 5 to 10 ms here; 2,000 take 1 to 2 ms, and a
 * turn between them costs some microseconds.
 */
export const SLICE_VALUES = 2_000;

export function runToEnd<T>(steps: Slices<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

export async function runInSlices<T>(steps: Slices<T>): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await turn();
  }
}
