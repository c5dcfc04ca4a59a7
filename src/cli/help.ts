import { TOKEN_USAGE } from "../rest/cli.ts";

/**
 * What `annal --help` prints. Kept apart from `usage.ts`, which command modules such as
 * `rest/cli.ts` import: the help text imports theirs, so it cannot live there.
 */
export const USAGE = `usage: annal <command> [options]

commands:
  start [--config <file>] [--only api|workers|projector]
      run annal: the HTTP server, the projector and the workers (or one of them)
  replay <projection> [--config <file>]
      rebuild a projection from the event log, side by side, then swap it in
  import [--config <file>]
      take a snapshot of every directory entry (the first one also starts capture)
  failed-work list [--state failed,retrying|all] [--limit N] [--json] | retry <id>
      change events whose processing failed for good, and retrying them
  hooks send <hook>/<webhook> (--body <json> | --body-file <file>) [--url U] [--secret-env NAME]
      sign a change event with $WEBHOOK_SECRET (or NAME) and send it
${TOKEN_USAGE}
  verify [--config <file>]
      check the Node.js version, the configuration, the database and its migrations
  --version [--json]
      print the version and the source commit

The configuration is --config, else $ANNAL_CONFIG, else ./annal.toml, else the demo.`;
