import { readFile } from "node:fs/promises";
import path from "node:path";
import t from "tap";
import { runDocs } from "../../src/cli/docs.ts";
import { configReference } from "../../src/config/reference/index.ts";
import { capturedOutput } from "./support.ts";

t.test("docs writes the generated documents, and --check then passes", async (t) => {
  const root = t.testdir({});
  const write = capturedOutput();
  t.equal(await runDocs([], write.output, root), 0);
  t.same(write.out, ["wrote docs/configuration.md", "wrote docs/errors.md"]);
  t.equal(await readFile(path.join(root, "docs/configuration.md"), "utf8"), configReference());

  const check = capturedOutput();
  t.equal(await runDocs(["--check"], check.output, root), 0);
  t.same([...check.out, ...check.err], []);
});

t.test("--check fails with ANNAL_DOCS_STALE when the file differs", async (t) => {
  const root = t.testdir({ docs: { "configuration.md": "# an old reference\n" } });
  const check = capturedOutput();
  t.equal(await runDocs(["--check"], check.output, root), 1);
  t.same(check.err, [
    "annal: ANNAL_DOCS_STALE: docs/configuration.md is not current",
    "annal: hint: run npm run docs",
  ]);
  t.equal(await readFile(path.join(root, "docs/configuration.md"), "utf8"), "# an old reference\n");
});

t.test("--check fails with ANNAL_DOCS_STALE when the file is missing", async (t) => {
  const check = capturedOutput();
  t.equal(await runDocs(["--check"], check.output, t.testdir({})), 1);
  t.same(check.err, [
    "annal: ANNAL_DOCS_STALE: docs/configuration.md is not current",
    "annal: hint: run npm run docs",
  ]);
});

t.test("anything but --check is a usage error", async (t) => {
  const run = capturedOutput();
  t.equal(await runDocs(["--chek"], run.output, t.testdir({})), 1);
  t.match(run.err, [/^annal: ANNAL_USAGE: unexpected argument "--chek"$/, /^annal: hint: /]);
});
