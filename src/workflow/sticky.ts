import type { InstanceState } from "../../projections/workflows/index.ts";

/** What a sticky run must offer the cache: the state it stands on and a way to be resumed. */
export interface ParkedRun {
  /** The instance's state as last folded for this run (its own later events not yet in it). */
  readonly state: InstanceState;
  /** The stream's version after this run's last append. */
  readonly version: number;
  /** Still parked at a wait, its code neither ended nor stopped by a wait of another call. */
  readonly resumable: boolean;
}

/** How a worker's sticky runs have served its wakes (for tests and the benchmarks). */
export interface StickyStats {
  /** Wakes that resumed a parked run. */
  hits: number;
  /** Wakes with no run kept here: the instance was replayed. */
  misses: number;
  /** Wakes whose kept run the log had overtaken (another worker advanced it): replayed. */
  stale: number;
  /** Runs let go to keep the cache within its size. */
  evicted: number;
}

/**
 * The runs of instance code this worker keeps parked between wakes (Temporal's "sticky
 * cache"): a run waiting for an answer, a retry, a child or its next turn keeps its folded
 * state and the code's own progress (the suspended `run` function itself), so the next wake of
 * the instance on this worker goes on from where the code stands instead of replaying every
 * earlier call. Bounded: beyond `size` runs, the one least recently parked is let go, and its
 * instance is replayed from the log when it wakes, exactly as after a crash or on another
 * worker. A run is taken out while it runs (`take`), so at most one advance uses it.
 */
export class StickyRuns<Run extends ParkedRun = ParkedRun> {
  readonly size: number;
  readonly stats: StickyStats = { hits: 0, misses: 0, stale: 0, evicted: 0 };
  // A Map iterates in insertion order: the first key is the run parked longest ago.
  readonly #runs = new Map<string, Run>();

  constructor(size: number) {
    this.size = size;
  }

  /** The run kept for `instanceId`, taken out of the cache (it is kept again when it parks). */
  take(instanceId: string): Run | undefined {
    const run = this.#runs.get(instanceId);
    if (run) this.#runs.delete(instanceId);
    return run;
  }

  /**
   * The run kept for `instanceId`, left in the cache: for a command that holds the instance's
   * lock (so no wake takes the run meanwhile) and only reads it.
   */
  peek(instanceId: string): Run | undefined {
    return this.#runs.get(instanceId);
  }

  /** Keeps a parked run; the oldest go when the cache is full. */
  keep(instanceId: string, run: Run): void {
    if (this.size <= 0 || !run.resumable) return;
    this.#runs.delete(instanceId);
    this.#runs.set(instanceId, run);
    for (const oldest of this.#runs.keys()) {
      if (this.#runs.size <= this.size) break;
      this.#runs.delete(oldest);
      this.stats.evicted++;
    }
  }

  /** Lets every kept run go (their instances are replayed when they wake). */
  clear(): void {
    this.stats.evicted += this.#runs.size;
    this.#runs.clear();
  }

  get kept(): number {
    return this.#runs.size;
  }
}
