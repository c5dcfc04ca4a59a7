import v8 from "node:v8";

/**
 * V8 settings for the annal process, set by bin/annal.js (what `annal`, `npm start` and
 * `npm run annal` run) before annal's modules load, for every command but `annal import`
 * (`setHeapFor`). The server holds a small live heap (60 to 70 MiB over 100,000 entries) and
 * makes a great deal of short-lived garbage: events parsed from the log, entries read from
 * the directory.
 *
 * With V8's defaults the young generation grows to its maximum and the old generation to up
 * to four times what survived the last full collection, so a first-start import of 100,000
 * entries peaked at 526 MiB resident for those 70 MiB. Here:
 * - the young generation keeps the size it starts with (`--semi-space-growth-factor=1`):
 *   short-lived objects die there just the same, in more, smaller scavenges;
 * - the old generation may grow to 1.5 times what survived (`--heap-growing-percent=50`).
 *
 * `npm run bench -- memory` measures both the peak and the time the import takes, and the
 * share of the server's CPU spent in GC (17% at 100,000 entries, 2026-11-28);
 * `npm run bench -- one-group --v8-heap` runs a first start without these flags: with the
 * import's live set now small they still kept its peak some 30 MiB lower (189 to 191 MiB
 * against 222) at no measurable cost in GC, so they stay (bench/RESULTS.md). Both flags are read by V8 as it goes, so setting them once the process
 * runs takes effect; the earlier the better, as the young generation never shrinks back to
 * its first size once it has grown. A flag given to Node.js on its command line wins: pass
 * your own (`node --heap-growing-percent=100 bin/annal.js start`) to trade memory for speed.
 */
export const HEAP_FLAGS: Readonly<Record<string, string>> = {
  "--semi-space-growth-factor": "1",
  "--heap-growing-percent": "50",
};

/**
 * Commands that read a large job through the heap and end, for which V8's own sizing is kept:
 * `annal import` turns every directory entry into a snapshot in this process, and with the
 * young generation kept small its garbage collection made it about half as fast (100,000
 * entries in 24.5 to 25.8 s against 16.0 to 16.4 s with V8's defaults, peak resident set 272 to
 * 291 MiB against 333 to 346). `annal replay` is bound by PostgreSQL and gains nothing, so it
 * keeps the small heap (a replay of the changes projection took 4.5 s either way).
 */
const THROUGHPUT_COMMANDS = new Set(["import"]);

/**
 * The heap settings for `annal <args>`: `keepHeapSmall` unless the command is one that is
 * better served by V8's own sizing (`THROUGHPUT_COMMANDS`).
 */
export function setHeapFor(
  args: readonly string[],
  execArgv: readonly string[] = process.execArgv,
): void {
  if (THROUGHPUT_COMMANDS.has(args[0] ?? "")) return;
  keepHeapSmall(execArgv);
}

export function keepHeapSmall(execArgv: readonly string[] = process.execArgv): void {
  for (const [flag, value] of Object.entries(HEAP_FLAGS)) {
    if (execArgv.some((arg) => sameFlag(arg, flag))) continue;
    v8.setFlagsFromString(`${flag}=${value}`);
  }
}

/** V8 takes `-` and `_` alike in a flag's name. */
function sameFlag(arg: string, flag: string): boolean {
  const name = arg.split("=")[0]!.replaceAll("_", "-");
  return name === flag;
}
