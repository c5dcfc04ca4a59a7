import path from "node:path";
import t from "tap";
import { runAnnal } from "../cli/support.ts";

/**
 * `annal simulate` refuses what it cannot simulate with a stable code, before it opens any
 * database: a file that is not there or not a definition, moments that are none, a period that
 * ends before it starts, a policy it does not know.
 */

t.setTimeout(400_000);

const REPO = path.resolve(import.meta.dirname, "../..");
const LEAVER = path.join(REPO, "ops/demo/workflows/leaver.ts");

const refusals: [string, string[], RegExp][] = [
  [
    "no such file",
    ["simulate", "nothere.ts", "--from", "now-1d", "--to", "now"],
    /ANNAL_SIMULATE_FILE_INVALID: nothere\.ts: there is no such file/,
  ],
  [
    "not a definition",
    ["simulate", path.join(REPO, "package.json"), "--from", "now-1d", "--to", "now"],
    /ANNAL_SIMULATE_FILE_INVALID/,
  ],
  [
    "a moment that is none",
    ["simulate", LEAVER, "--from", "the other day", "--to", "now"],
    /ANNAL_SIMULATE_PERIOD_INVALID: --from: "the other day" is not a moment/,
  ],
  [
    "--to before --from",
    ["simulate", LEAVER, "--from", "now", "--to", "now-1d"],
    /ANNAL_SIMULATE_PERIOD_INVALID: --to \S+ lies before --from/,
  ],
  [
    "an unknown policy",
    ["simulate", LEAVER, "--from", "now-1d", "--to", "now", "--dialogs", "maybe"],
    /ANNAL_SIMULATE_POLICY_INVALID: --dialogs maybe/,
  ],
  [
    "access: not TOML",
    ["simulate", "access", LEAVER, "--at", "now"],
    /ANNAL_SIMULATE_FILE_INVALID: \S+leaver\.ts: /,
  ],
];

for (const [what, args, expected] of refusals) {
  t.test(`simulate refuses ${what}`, async (t) => {
    const run = await runAnnal(args, {
      cwd: REPO,
      env: { ANNAL_CONFIG: path.join(REPO, "ops/demo/annal.toml") },
    });
    t.equal(run.code, 1, run.stderr);
    t.match(run.stderr, expected);
    t.equal(run.stdout, "");
  });
}
