import t from "tap";
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
    ["replay"],
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
