import type { SingleBar } from "cli-progress";
import { progressBar } from "../progress.ts";

/**
 * Progress of a command that works in phases (streams folded, then each projection rebuilt):
 * one bar per phase on standard error, the previous one stopped when the next begins.
 */
export function phaseProgress(unit: (phase: string) => string): {
  update(phase: string, done: number, total: number): void;
  stop(): void;
} {
  let current: { phase: string; bar: SingleBar } | undefined;
  return {
    update(phase, done, total) {
      if (current?.phase !== phase) {
        current?.bar.stop();
        current = { phase, bar: progressBar(phase, unit(phase)) };
        current.bar.start(total, done);
      }
      current.bar.setTotal(total);
      current.bar.update(done);
    },
    stop() {
      current?.bar.stop();
      current = undefined;
    },
  };
}
