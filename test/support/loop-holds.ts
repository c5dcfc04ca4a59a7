import { Session } from "node:inspector/promises";
import pg from "pg";

/**
 * How long the event loop was held while `work` ran: a timer asks for a turn every
 * millisecond, and each time it comes notes the CPU time this thread spent since the last
 * (`process.threadCpuUsage`): whatever ran between two turns held the loop that long. CPU
 * time, not wall time, so that a busy machine, which keeps the process waiting for a core,
 * does not count as a hold (`wall` has the wall-time figures, which it does count).
 *
 * @example
 * const { result, holds } = await loopHoldsDuring(() => captureFromAccesslog(context));
 * t.ok(holds.longest < 50);
 */
export interface LoopHolds {
  /** The longest hold seen, in ms of this thread's CPU. */
  readonly longest: number;
  /** Every hold of more than 2 ms of CPU, in ms, in the order they came. */
  readonly holds: readonly number[];
  /** The longest wait between two turns, in ms of wall time (a busy machine adds to it). */
  readonly longestWall: number;
  /**
   * When each hold of `holds` began and ended (the monotonic clock in µs, as V8's profiles
   * stamp their samples), and its CPU ms.
   */
  readonly windows: readonly (readonly [number, number, number])[];
  /** How many times the timer came round. */
  readonly turns: number;
  /** The work's wall time, in ms. */
  readonly ms: number;
  /** How many holds were longer than `ms` (CPU). */
  over(ms: number): number;
}

const cpuMs = () => {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
};

export async function loopHoldsDuring<T>(
  work: () => Promise<T>,
): Promise<{ result: T; holds: LoopHolds }> {
  const holds: number[] = [];
  let turns = 0;
  let longestWall = 0;
  let last = performance.now();
  let lastCpu = cpuMs();
  const windows: [number, number, number][] = [];
  /** The monotonic clock in µs, as V8's profiles stamp their samples. */
  const ticks = () => Number(process.hrtime.bigint() / 1000n);
  let lastTicks = ticks();
  const note = () => {
    const now = performance.now();
    const cpu = cpuMs();
    const at = ticks();
    if (cpu - lastCpu > 2) {
      windows.push([lastTicks, at, cpu - lastCpu]);
      holds.push(cpu - lastCpu);
    }
    longestWall = Math.max(longestWall, now - last - 1);
    last = now;
    lastCpu = cpu;
    lastTicks = at;
  };
  const timer = setInterval(() => {
    note();
    turns++;
  }, 1);
  const started = performance.now();
  try {
    const result = await work();
    const ms = performance.now() - started;
    // The stretch since the timer's last turn counts too: work that held the loop to its end.
    note();
    return {
      result,
      holds: {
        longest: Math.max(0, ...holds),
        holds,
        longestWall,
        windows,
        turns,
        ms,
        over: (bound) => holds.filter((held) => held > bound).length,
      },
    };
  } finally {
    clearInterval(timer);
  }
}

/**
 * `work` (a `loopHoldsDuring`) under V8's CPU profiler, sampling every 200 µs: what ran in its
 * three longest holds, by the innermost frame of annal's own code on the stack and the function
 * running. For finding what to slice, not for assertions.
 */
export async function longestHoldProfile<T>(
  work: () => Promise<{ result: T; holds: LoopHolds }>,
): Promise<{
  result: { result: T; holds: LoopHolds };
  /** The three longest holds, and where their samples were. */
  holds: { cpu: number; wall: number; top: { fn: string; ms: number }[] }[];
}> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  let result: { result: T; holds: LoopHolds };
  let profile;
  try {
    result = await work();
  } finally {
    ({ profile } = await session.post("Profiler.stop"));
    session.disconnect();
  }
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const name = (id: number) => {
    const frame = byId.get(id)!.callFrame;
    return `${frame.functionName || "(anonymous)"} ${frame.url.split("/").slice(-2).join("/")}:${frame.lineNumber + 1}`;
  };
  const own = (id: number) => /\/(src|projections)\//.test(byId.get(id)!.callFrame.url);
  const longest = [...result.holds.windows].sort((a, b) => b[2] - a[2]).slice(0, 3);
  const holds = longest.map(([from, to, cpu]) => {
    const annal = new Map<string, number>();
    let at = profile.startTime;
    const samples = profile.samples ?? [];
    for (let i = 0; i < samples.length; i++) {
      const delta = profile.timeDeltas?.[i] ?? 0;
      at += delta;
      if (at < from || at > to) continue;
      // The innermost frame of annal's own code, and the function running in it.
      let frame: number | undefined = samples[i]!;
      const running = name(frame);
      while (frame !== undefined && !own(frame)) frame = parent.get(frame);
      const where = `${frame === undefined ? "(outside annal)" : name(frame)} > ${running}`;
      annal.set(where, (annal.get(where) ?? 0) + delta / 1000);
    }
    const top = [...annal]
      .map(([fn, ms]) => ({ fn, ms }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 6);
    return { cpu, wall: (to - from) / 1000, top };
  });
  return { result: result!, holds };
}

/**
 * The longest JSON text made (`JSON.stringify`) and the longest jsonb or json value pg parsed
 * while `work` ran, in characters: work over a large value that makes or parses its whole
 * text in one piece holds the event loop for as long as that takes (11 MB of a change to a
 * group of 100,000 members: tens of milliseconds), whatever else it slices. Unlike a time, the
 * figure does not depend on how busy the machine is.
 */
export async function longestJsonDuring<T>(
  work: () => Promise<T>,
): Promise<{ result: T; made: number; parsed: number }> {
  let made = 0;
  let parsed = 0;
  const stringify = JSON.stringify;
  const parsers = [pg.types.builtins.JSON, pg.types.builtins.JSONB].map(
    (oid) => [oid, pg.types.getTypeParser(oid, "text") as (text: string) => unknown] as const,
  );
  JSON.stringify = function (...args: Parameters<typeof stringify>) {
    const text = stringify.apply(JSON, args);
    made = Math.max(made, text?.length ?? 0);
    return text;
  } as typeof stringify;
  for (const [oid, parse] of parsers) {
    pg.types.setTypeParser(oid, (text: string) => {
      parsed = Math.max(parsed, text.length);

      return parse(text);
    });
  }
  try {
    return { result: await work(), made, parsed };
  } finally {
    JSON.stringify = stringify;
    for (const [oid, parse] of parsers) pg.types.setTypeParser(oid, parse);
  }
}
