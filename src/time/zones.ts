import { createRequire } from "node:module";

/**
 * date-fns-tz's `formatInTimeZone` and `fromZonedTime`, loaded from its CommonJS build.
 *
 * Its ES build imports `getDefaultOptions` from date-fns's root index, so Node's ES loader
 * loads all of date-fns's three hundred modules, and keeps about 230 MiB of resident memory
 * for them (measured on Node 26: `import("date-fns")` adds 262 MiB to a process's resident
 * set, `require("date-fns-tz")` 30 MiB). That was most of a running server's memory
 * (`npm run bench -- memory`). Import these from here, never from "date-fns-tz".
 */
const require = createRequire(import.meta.url);
const dateFnsTz = require("date-fns-tz") as typeof import("date-fns-tz");

export const { formatInTimeZone, fromZonedTime } = dateFnsTz;
