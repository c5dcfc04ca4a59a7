/**
 * The steps of `npm run bench -- large-entry` in a process that sets annal's heap settings
 * before it loads annal's modules, as bin/annal.js does for `annal start` (src/cli/heap.ts):
 * the event-loop holds a large entry causes depend on the young generation's size.
 */
import { keepHeapSmall } from "../src/cli/heap.ts";

keepHeapSmall();
const { largeEntryBenchmark } = await import("./large-entry.ts");
await largeEntryBenchmark();
