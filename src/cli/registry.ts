/**
 * Every command of `annal` and its usages, declared once: `annal --help` lists them, `annal
 * <command> [<subcommand>] --help` prints one, and each command parses its arguments with its
 * own (`parseCommandLine(args, USAGE)`). The commands' modules load only when they run.
 */
import { CONFIG_OPTION, NO_POSITIONALS, usage, type Command } from "./command.ts";
import { GRAPHQL, INVENTORY, REFRESH } from "./scenario-usages.ts";

export const ACCESS_SHOW = usage({
  words: ["access", "show"],
  synopsis: "[<account>] [--at <time>] [--json] [--config <file>]",
  description: `who could do what at a moment (default now; 2026-11-24T10:00:00Z, now-1h, yesterday, as
the REST channel's at), and since when: one account (its id, name or origin:name) or every
account; read from the access projection`,
  options: { ...CONFIG_OPTION, at: { type: "string" }, json: { type: "boolean" } },
  positionals: { min: 0, max: 1, what: "" },
});

export const FAILED_WORK_LIST = usage({
  words: ["failed-work", "list"],
  synopsis: "[--state failed,retrying|all] [--limit N] [--json] [--config <file>]",
  description: "change events whose processing failed for good, newest first",
  options: {
    ...CONFIG_OPTION,
    state: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean" },
  },
  positionals: NO_POSITIONALS,
});

export const FAILED_WORK_RETRY = usage({
  words: ["failed-work", "retry"],
  synopsis: "<id> [--config <file>]",
  description: "queue a failed change event for processing again",
  options: CONFIG_OPTION,
  positionals: { min: 1, max: 1, what: "the failed work's id: annal failed-work retry <id>" },
});

export const HOOKS_SEND = usage({
  words: ["hooks", "send"],
  synopsis:
    "<hook>/<webhook> (--body <json> | --body-file <file>) [--url <url>] [--secret-env <name>] [--id <id>] [--config <file>]",
  description: `sign a change event with $WEBHOOK_SECRET (or the variable --secret-env names) and send it
to --url, by default annal's own server on this machine ([server] host and port, or PORT);
--id sets the delivery id (default a new one)`,
  options: {
    ...CONFIG_OPTION,
    url: { type: "string" },
    body: { type: "string" },
    "body-file": { type: "string" },
    "secret-env": { type: "string" },
    id: { type: "string" },
  },
  positionals: { min: 1, max: 1, what: "the webhook: annal hooks send <hook>/<webhook>" },
});

export const INIT = usage({
  words: ["init"],
  synopsis: "<dir> [--annal <version>]",
  description: `write a new project that uses annal: package.json (npm start, npm test), annal.toml
with .env.example, workflows/ with an example, tests/, hooks/, exercises/, a README; the
directory must be new or empty; --annal sets how package.json asks for annal (default
^<this version>; a tarball's path works)`,
  options: { annal: { type: "string" } },
  positionals: { min: 1, max: 1, what: "the new project's directory: annal init <dir>" },
});

export const EXERCISE = usage({
  words: ["exercise"],
  synopsis: "[<number>|<name>] [--list]",
  description: `type-check a practice task of exercises/ (3, or request-answer) and run its tests;
without one, the first task not passing yet (each pass is recorded in exercises/progress.json,
until the task's files change); --list lists the tasks and which pass`,
  options: { list: { type: "boolean" } },
  positionals: { min: 0, max: 1, what: "" },
});

export const IMPORT = usage({
  words: ["import"],
  synopsis: "[--config <file>]",
  description: "take a snapshot of every directory entry (the first one also starts capture)",
  options: CONFIG_OPTION,
  positionals: NO_POSITIONALS,
});

export const LOG_VERIFY = usage({
  words: ["log", "verify"],
  synopsis: "[--from <position>] [--to <position>] [--config <file>]",
  description: `walk the event log's hash chain, recomputing every event's hash, from the event at
--from (default the first) to the one at --to (default the chain's head); names the first event
that does not match (ANNAL_LOG_TAMPERED, exit 1), or prints the head it reached`,
  options: { ...CONFIG_OPTION, from: { type: "string" }, to: { type: "string" } },
  positionals: NO_POSITIONALS,
});

export const RETENTION_RUN = usage({
  words: ["retention", "run"],
  synopsis: "[--dry-run] [--config <file>]",
  description: `fold the event log before the retention horizon ([retention] keep) into one checkpoint per
entry, remove the events it replaces, and rebuild the projections, with progress; --dry-run
reports what a run would fold and changes nothing`,
  options: { ...CONFIG_OPTION, "dry-run": { type: "boolean" } },
  positionals: NO_POSITIONALS,
});

export const ERASE = usage({
  words: ["erase"],
  synopsis: "<entry id|dn> --reason <text> [--attributes a,b] [--config <file>]",
  description: `redact one person's values in the event log and every projection (a right-to-erasure
order), for an entry already deleted from the directory; records an event that says which
attributes and events were erased, and why, never the values`,
  options: { ...CONFIG_OPTION, reason: { type: "string" }, attributes: { type: "string" } },
  positionals: { min: 1, max: 1, what: "the entry: annal erase <entry id|dn> --reason <text>" },
});

export const EXTRACT = usage({
  words: ["extract"],
  synopsis: "<dir> [--tables t1,t2] [--rows-per-file N] [--config <file>]",
  description: `write the history as Parquet into <dir> for DuckDB, Spark or a warehouse: events,
changes, entry_versions (one row per version, valid_from to valid_to), memberships (intervals),
workflow_instances, workflow_steps (--tables: some of them); a later run into the same <dir>
writes only what changed since the log position its manifest (annal-extract.json) records;
files of at most --rows-per-file rows (default 1000000); progress on standard error
(docs/analytics.md)`,
  options: {
    ...CONFIG_OPTION,
    tables: { type: "string" },
    "rows-per-file": { type: "string" },
  },
  positionals: { min: 1, max: 1, what: "the folder: annal extract <dir>" },
});

export const VERIFY_EXPORT = usage({
  words: ["verify-export"],
  synopsis: "<file> <signature> --keys <file|url>",
  description: `check a signed export offline: <signature> is a file holding the export's
Annal-Signature trailer, --keys the public keys (a JWK set: a file, or a URL such as
https://annal.example.org/api/keys); prints what the signature says, or fails with
ANNAL_SIGNATURE_INVALID (exit 1) when a byte changed`,
  options: { keys: { type: "string" } },
  positionals: {
    min: 2,
    max: 2,
    what: "the export and its signature: annal verify-export <file> <signature>",
  },
});

export const MAIL = usage({
  words: ["mail"],
  synopsis: "[--limit N] [--json] [--config <file>]",
  description: `the messages the demo's mail catcher ([messaging.demo]) kept, newest first: when, to
whom, the subject, and with --json the text`,
  options: { ...CONFIG_OPTION, limit: { type: "string" }, json: { type: "boolean" } },
  positionals: NO_POSITIONALS,
});

export const REPLAY = usage({
  words: ["replay"],
  synopsis: "[<projection>] [--config <file>]",
  description: `rebuild a projection from the event log, side by side, then swap it in;
without a projection, list the projections`,
  options: CONFIG_OPTION,
  positionals: { min: 0, max: 1, what: "the projection to replay: annal replay <projection>" },
});

export const SESSIONS_LIST = usage({
  words: ["sessions", "list"],
  synopsis: "[--json] [--config <file>]",
  description: "list people's active sessions (by id, never the cookie)",
  options: { ...CONFIG_OPTION, json: { type: "boolean" } },
  positionals: NO_POSITIONALS,
});

export const SESSIONS_REVOKE = usage({
  words: ["sessions", "revoke"],
  synopsis: "<id> [--config <file>]",
  description: "end a session at once: its cookie is refused from now on",
  options: CONFIG_OPTION,
  positionals: { min: 1, max: 1, what: "the session's id: annal sessions revoke <id>" },
});

export const REVIEW_START = usage({
  words: ["review", "start"],
  synopsis: "<name> [--json] [--config <file>]",
  description: `start a campaign of the [[reviews]] table <name> now: its items are read from the
history (each member of each group in scope, with when and how the membership began), recorded,
and each becomes an open decision for its reviewers; prints the campaign's id, deadline and items`,
  options: { ...CONFIG_OPTION, json: { type: "boolean" } },
  positionals: { min: 1, max: 1, what: "the review's name: annal review start <name>" },
});

export const REVIEW_LIST = usage({
  words: ["review", "list"],
  synopsis: "[<name>] [--json] [--config <file>]",
  description: "the campaigns (of the review <name>), the latest first, with their progress",
  options: { ...CONFIG_OPTION, json: { type: "boolean" } },
  positionals: { min: 0, max: 1, what: "" },
});

export const REVIEW_REPORT = usage({
  words: ["review", "report"],
  synopsis: "<campaign id> --out <file> [--config <file>]",
  description: `write a campaign's report (every item, its decision, who, when, the directory change
it caused with its log position) to --out, and its signature to <file>.sig: check both with
annal verify-export <file> <file>.sig --keys <url>/api/keys`,
  options: { ...CONFIG_OPTION, out: { type: "string" } },
  positionals: { min: 1, max: 1, what: "the campaign's id: annal review report <id> --out <file>" },
});

export const SIMULATE_REVIEW = usage({
  words: ["simulate", "review"],
  synopsis: "<name|file> --at <time> [--out <file>] [--json] [--config <file>]",
  description: `which items a campaign of the [[reviews]] table <name> (or of the first [[reviews]]
table of a TOML file, a draft) would have had at a past moment, and who would have reviewed
them, from the directory's history as it was then; writes nothing`,
  options: {
    ...CONFIG_OPTION,
    at: { type: "string" },
    out: { type: "string" },
    json: { type: "boolean" },
  },
  positionals: {
    min: 1,
    max: 1,
    what: "the review: annal simulate review <name|file> --at <time>",
  },
});

export const SIMULATE = usage({
  words: ["simulate"],
  synopsis:
    "<definition file> --from <time> --to <time> [--dialogs approve|deny|as-answered] [--fallback approve|deny|unanswered] [--starts-of <name>] [--out <file>] [--json] [--config <file>]",
  description: `what a new or changed workflow definition would have done over a past period: every start
of the deployed definition (or of --starts-of) in the period runs again in a scratch database,
the directory read as it was then and its writes recorded, not made; dialogs answered as they
were then (default; --fallback for those the deployed version had no answer to), or all
approved or denied. Prints a table (--json: the report), writes the JSON report to --out;
nothing reaches the directory or the live log`,
  options: {
    ...CONFIG_OPTION,
    from: { type: "string" },
    to: { type: "string" },
    dialogs: { type: "string" },
    fallback: { type: "string" },
    "starts-of": { type: "string" },
    out: { type: "string" },
    json: { type: "boolean" },
  },
  positionals: {
    min: 1,
    max: 1,
    what: "the definition file: annal simulate <file> --from <time> --to <time>",
  },
});

export const SIMULATE_ACCESS = usage({
  words: ["simulate", "access"],
  synopsis:
    "<file> --at <time> [--from <time> --to <time>] [--out <file>] [--json] [--config <file>]",
  description: `what an Access Configuration (a TOML file with [authorization.grants], as annal.toml
has it) would have changed at a moment: who would have gained or lost which access function
compared with the configuration active then, and which commands recorded in the log from
--from to --to (default: the day of --at) would have been refused`,
  options: {
    ...CONFIG_OPTION,
    at: { type: "string" },
    from: { type: "string" },
    to: { type: "string" },
    out: { type: "string" },
    json: { type: "boolean" },
  },
  positionals: {
    min: 1,
    max: 1,
    what: "the Access Configuration file: annal simulate access <file> --at <time>",
  },
});

export const START = usage({
  words: ["start"],
  synopsis: "[--config <file>] [--only api|workers|projector] [--dev]",
  description: `run annal: the HTTP server, the projector and the workers (or one of them) until
SIGINT or SIGTERM; --dev reloads the rules file and its imports when they change`,
  options: { ...CONFIG_OPTION, only: { type: "string" }, dev: { type: "boolean" } },
  positionals: NO_POSITIONALS,
});

export const STATUS = usage({
  words: ["status"],
  synopsis: "[--json] [--config <file>]",
  description: `every annal process attached to the database (parts, host, pid, version, started, last
seen; one not seen for 30 s is gone), each projection's position and lag, which process holds
capture, the job queues' depths, failed work and the active Access Configuration`,
  options: { ...CONFIG_OPTION, json: { type: "boolean" } },
  positionals: NO_POSITIONALS,
});

export const STOP = usage({
  words: ["stop"],
  synopsis: "[--timeout <duration>] [--config <file>]",
  description: `stop the annal started from this directory (the pid file in its data directory): SIGTERM,
then up to --timeout (default 30s) for it to finish its requests and stop`,
  options: { ...CONFIG_OPTION, timeout: { type: "string" } },
  positionals: NO_POSITIONALS,
});

export const LOGS = usage({
  words: ["logs"],
  synopsis: "[--follow] [--since <moment>] [--config <file>]",
  description: `the log of the annal started from this directory (<dataDir>/annal.log, JSON lines), from
--since (2026-11-27T10:00:00Z, now-10m, yesterday) if given; --follow prints new lines as they
come, until Ctrl-C`,
  options: {
    ...CONFIG_OPTION,
    follow: { type: "boolean", short: "f" },
    since: { type: "string" },
  },
  positionals: NO_POSITIONALS,
});

export const TEST = usage({
  words: ["test"],
  synopsis: "[<pattern>]",
  description: `run the project's workflow tests (tests/**/*.test.ts, or those whose path contains
<pattern> or matches it as a glob) with Node.js's test runner, each test on a database of its
own (DATABASE_URL's server, or an embedded PostgreSQL); exit 1 when one fails`,
  options: {},
  positionals: { min: 0, max: 1, what: "" },
});

export const TOKEN_CREATE = usage({
  words: ["token", "create"],
  synopsis: "--name <name> --access <read,export,...> [--config <file>]",
  description: `create a service account and print its bearer token, once; for an existing account,
add a token (its access stays as it is)`,
  options: { ...CONFIG_OPTION, name: { type: "string" }, access: { type: "string" } },
  positionals: NO_POSITIONALS,
});

export const TOKEN_ACCESS = usage({
  words: ["token", "access"],
  synopsis:
    "<name> [--set <functions> | --add <functions> | --remove <functions>] [--config <file>]",
  description: "change what an account may do (every token of it) and print what it can now do",
  options: {
    ...CONFIG_OPTION,
    set: { type: "string" },
    add: { type: "string" },
    remove: { type: "string" },
  },
  positionals: { min: 1, max: 1, what: "the account: annal token access <name> --add <functions>" },
});

export const TOKEN_LIST = usage({
  words: ["token", "list"],
  synopsis: "[--json] [--config <file>]",
  description:
    "list the service accounts, their access and their tokens (by their first characters)",
  options: { ...CONFIG_OPTION, json: { type: "boolean" } },
  positionals: NO_POSITIONALS,
});

export const TOKEN_REVOKE = usage({
  words: ["token", "revoke"],
  synopsis: "<name> [--config <file>]",
  description: "revoke a service account and every token it has",
  options: CONFIG_OPTION,
  positionals: { min: 1, max: 1, what: "the account to revoke: annal token revoke <name>" },
});

export const VERIFY = usage({
  words: ["verify"],
  synopsis: "[--config <file>]",
  description: "check the Node.js version, the configuration, the database and its migrations",
  options: CONFIG_OPTION,
  positionals: NO_POSITIONALS,
});

export const WORKFLOWS_LIST = usage({
  words: ["workflows", "list"],
  synopsis: "[--json] [--config <file>]",
  description: "the deployed workflow definitions: name, version, bundle hash, live instances",
  options: { ...CONFIG_OPTION, json: { type: "boolean" } },
  positionals: NO_POSITIONALS,
});

/** Every command, in the order `annal --help` lists them. */
export const COMMANDS: readonly Command[] = [
  { name: "start", usages: [START], load: () => import("./commands/start.ts") },
  { name: "status", usages: [STATUS], load: () => import("./commands/status.ts") },
  { name: "stop", usages: [STOP], load: () => import("./commands/stop.ts") },
  { name: "logs", usages: [LOGS], load: () => import("./commands/logs.ts") },
  { name: "replay", usages: [REPLAY], load: () => import("./commands/replay.ts") },
  { name: "import", usages: [IMPORT], load: () => import("./commands/import.ts") },
  {
    name: "failed-work",
    usages: [FAILED_WORK_LIST, FAILED_WORK_RETRY],
    load: () => import("./commands/failed-work.ts"),
  },
  { name: "hooks", usages: [HOOKS_SEND], load: () => import("./commands/hooks.ts") },
  {
    name: "token",
    usages: [TOKEN_CREATE, TOKEN_ACCESS, TOKEN_LIST, TOKEN_REVOKE],
    load: () => import("./commands/token.ts"),
  },
  { name: "workflows", usages: [WORKFLOWS_LIST], load: () => import("./commands/workflows.ts") },
  {
    name: "sessions",
    usages: [SESSIONS_LIST, SESSIONS_REVOKE],
    load: () => import("./commands/sessions.ts"),
  },
  { name: "access", usages: [ACCESS_SHOW], load: () => import("./commands/access.ts") },
  {
    name: "simulate",
    usages: [SIMULATE, SIMULATE_ACCESS, SIMULATE_REVIEW],
    load: () => import("./commands/simulate.ts"),
  },
  { name: "verify", usages: [VERIFY], load: () => import("./commands/verify.ts") },
  {
    name: "review",
    usages: [REVIEW_START, REVIEW_LIST, REVIEW_REPORT],
    load: () => import("./commands/review.ts"),
  },
  { name: "mail", usages: [MAIL], load: () => import("./commands/mail.ts") },
  { name: "init", usages: [INIT], load: () => import("./commands/init.ts") },
  { name: "test", usages: [TEST], load: () => import("./commands/test.ts") },
  { name: "exercise", usages: [EXERCISE], load: () => import("./commands/exercise.ts") },

  { name: "refresh", usages: [REFRESH], load: () => import("./commands/refresh.ts") },
  { name: "graphql", usages: [GRAPHQL], load: () => import("./commands/graphql.ts") },
  { name: "inventory", usages: [INVENTORY], load: () => import("./commands/inventory.ts") },

  { name: "log", usages: [LOG_VERIFY], load: () => import("./commands/log.ts") },
  { name: "retention", usages: [RETENTION_RUN], load: () => import("./commands/retention.ts") },
  { name: "erase", usages: [ERASE], load: () => import("./commands/erase.ts") },
  { name: "extract", usages: [EXTRACT], load: () => import("./commands/extract.ts") },
  {
    name: "verify-export",
    usages: [VERIFY_EXPORT],
    load: () => import("./commands/verify-export.ts"),
  },
];

/** The options of `annal` itself, without a command. */
export const ANNAL = usage({
  words: [],
  synopsis: "--version [--json] | --help",
  description: "print the version and the source commit, or this help",
  options: {
    version: { type: "boolean" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  positionals: NO_POSITIONALS,
});
