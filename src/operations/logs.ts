import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";

/**
 * Whether a log line is at or after `since`: by its `time` (the ISO timestamp annal's logger
 * writes). A line without one (a stack trace, a line written by something else) goes with the
 * line before it.
 */
function lineTime(line: string): number | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const time = (JSON.parse(line) as { time?: unknown }).time;
    const ms = typeof time === "string" ? Date.parse(time) : typeof time === "number" ? time : NaN;
    return Number.isNaN(ms) ? undefined : ms;
  } catch {
    return undefined;
  }
}

/**
 * Writes the lines of the log file `file` from byte `start`, those at or after `since`, and
 * returns where it stopped (the start of a line not yet complete).
 */
async function readFrom(
  file: string,
  start: number,
  filter: { since?: Date; showing: boolean },
  write: (line: string) => void,
): Promise<number> {
  const size = (await stat(file)).size;
  if (size <= start) return size < start ? 0 : start; // truncated: read it again from the top
  const stream = createReadStream(file, { start, end: size - 1, encoding: "utf8" });
  let consumed = start;
  let pending = "";
  for await (const chunk of stream as AsyncIterable<string>) {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf("\n")) !== -1) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      consumed += Buffer.byteLength(line) + 1;
      const time = lineTime(line);
      if (time !== undefined)
        filter.showing = filter.since === undefined || time >= filter.since.getTime();
      if (filter.showing) write(line);
    }
  }
  return consumed;
}

/**
 * `annal logs`: the lines of the log file, those at or after `since`; with `follow`, then the
 * lines written later, as they come, until `signal` aborts.
 */
export async function readLogs(
  file: string,
  options: {
    readonly since?: Date;
    readonly follow?: boolean;
    readonly signal?: AbortSignal;
    readonly pollMs?: number;
  },
  write: (line: string) => void,
): Promise<void> {
  const filter = { since: options.since, showing: options.since === undefined };
  let offset = await readFrom(file, 0, filter, write);
  if (!options.follow) return;
  const pollMs = options.pollMs ?? 250;
  while (!options.signal?.aborted) {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, pollMs);
      options.signal?.addEventListener("abort", done);
    });
    if (options.signal?.aborted) return;
    offset = await readFrom(file, offset, filter, write).catch(() => offset);
  }
}
