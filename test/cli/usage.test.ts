import t from "tap";
import { formatEta } from "../../src/cli/progress.ts";
import { runAnnal } from "./support.ts";

t.test("an unknown command is ANNAL_USAGE with a hint, exit 1", async (t) => {
  const run = await runAnnal(["frobnicate"]);
  t.equal(run.code, 1);
  t.equal(run.stdout, "");
  t.equal(
    run.stderr,
    'annal: ANNAL_USAGE: unknown command "frobnicate"\nannal: hint: run annal --help for the commands and their options\n',
  );
});

t.test("no command, or an unknown option, is ANNAL_USAGE too", async (t) => {
  for (const args of [
    [],
    ["start", "--frob"],
    ["verify", "extra"],
    ["start", "--only", "everything"],
  ]) {
    const run = await runAnnal(args);
    t.equal(run.code, 1, args.join(" "));
    t.match(run.stderr, /^annal: ANNAL_USAGE: .+\nannal: hint: /, args.join(" "));
  }
});

t.test("--help prints the commands", async (t) => {
  const run = await runAnnal(["--help"]);
  t.equal(run.code, 0);
  t.match(run.stdout, /annal <command>[\s\S]*start[\s\S]*replay[\s\S]*verify/);
});

t.test(
  "every argument error is annal's own line and a hint, never Node's parser text",
  async (t) => {
    const cases: [string[], string][] = [
      [["start", "--frob"], "unknown option --frob"],
      [["start", "--config"], "option --config needs a value"],
      [["import", "--config"], "option --config needs a value"],
      [["failed-work", "list", "--json=yes"], "option --json takes no value"],
      [["failed-work", "list", "-x"], "unknown option -x"],
      [["failed-work", "retry"], "missing the failed work's id: annal failed-work retry <id>"],
      [["hooks", "send"], "missing the webhook: annal hooks send <hook>/<webhook>"],
      [["verify", "extra"], 'unexpected argument "extra"'],
      [["--frob"], "unknown option --frob"],
    ];
    for (const [args, message] of cases) {
      const run = await runAnnal(args);
      const what = args.join(" ");
      t.equal(run.code, 1, what);
      const lines = run.stderr.trimEnd().split("\n");
      t.equal(lines.length, 2, `${what}: two lines`);
      t.equal(lines[0], `annal: ANNAL_USAGE: ${message}`, what);
      t.match(lines[1], /^annal: hint: \S/, what);
      t.notMatch(run.stderr, /To specify a positional|ERR_PARSE_ARGS|argument missing/, what);
    }
    const start = await runAnnal(["start", "--frob"]);
    t.match(start.stderr, /hint: annal start takes --config <value>, --only <value>/);
  },
);

t.test("a --body-file that cannot be read says so, with its path", async (t) => {
  const run = await runAnnal(
    ["hooks", "send", "hr/employees", "--body-file", "/no/such/body.json"],
    { env: { WEBHOOK_SECRET: "not-a-real-secret" } },
  );
  t.equal(run.code, 1);
  t.equal(
    run.stderr.split("\n")[0],
    "annal: ANNAL_FILE_UNREADABLE: cannot read --body-file /no/such/body.json: there is no such file",
  );
  t.match(run.stderr, /^annal: hint: /m);
});

t.test("annal replay without a name lists the projections", async (t) => {
  const run = await runAnnal(["replay"]);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /annal replay <projection>/);
  for (const name of ["entries", "entry_versions", "changes", "failed_work"]) {
    t.match(run.stdout, new RegExp(`^  ${name} +version \\d+$`, "m"), name);
  }
});

t.test("the progress bar tells the time left, or -- before it can", async (t) => {
  t.equal(formatEta("INF"), "--");
  t.equal(formatEta(Number.NaN), "--");
  t.equal(formatEta(Infinity), "--");
  t.equal(formatEta(7), "7s");
  t.equal(formatEta(65), "1m05s");
  t.equal(formatEta(3_900), "1h05m");
});
