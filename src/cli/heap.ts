import v8 from "node:v8";

/**
 * V8 settings for the annal process, set by bin/annal.js (what `annal`, `npm start` and
 * `npm run annal` run) before annal's modules load. The server holds a small live heap (60 to
 * 70 MiB over 100,000 entries) and makes a great deal of short-lived garbage: events parsed
 * from the log, entries read from the directory.
 *
 * With V8's defaults the young generation grows to its maximum and the old generation to up
 * to four times what survived the last full collection, so a first-start import of 100,000
 * entries peaked at 526 MiB resident for those 70 MiB. Here:
 * - the young generation keeps the size it starts with (`--semi-space-growth-factor=1`):
 *   short-lived objects die there just the same, in more, smaller scavenges;
 * - the old generation may grow to 1.5 times what survived (`--heap-growing-percent=50`).
 *
 * `npm run bench -- memory` measures both the peak and the time the import takes
 * (bench/RESULTS.md). Both flags are read by V8 as it goes, so setting them once the process
 * runs takes effect; the earlier the better, as the young generation never shrinks back to
 * its first size once it has grown. A flag given to Node.js on its command line wins: pass
 * your own (`node --heap-growing-percent=100 bin/annal.js start`) to trade memory for speed.
 */
export const HEAP_FLAGS: Readonly<Record<string, string>> = {
  "--semi-space-growth-factor": "1",
  "--heap-growing-percent": "50",
};

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
