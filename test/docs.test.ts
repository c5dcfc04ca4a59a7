import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import t from "tap";

// The documents in docs/ as a reader follows them: files are moving while the code is
// reorganised, and a document that names a test which no longer exists guards nothing.
const REPO = path.resolve(import.meta.dirname, "..");
const DOCS = path.join(REPO, "docs");
const documents = readdirSync(DOCS).filter((name) => name.endsWith(".md"));

t.test("the documents name only tests that exist", async (t) => {
  const architecture = readFileSync(path.join(DOCS, "architecture.md"), "utf8");
  const named = [...architecture.matchAll(/`(test\/[\w./-]+)`/g)].map((m) => m[1]!);
  t.ok(named.length > 20, "the invariants name their tests");
  for (const file of new Set(named)) t.ok(existsSync(path.join(REPO, file)), `${file} exists`);
});

t.test("the documents link only to files that exist", async (t) => {
  for (const document of documents) {
    const text = readFileSync(path.join(DOCS, document), "utf8");
    for (const [, target] of text.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      t.ok(existsSync(path.resolve(DOCS, target!)), `${document} → ${target}`);
    }
  }
});

t.test("the refusals' table says where GraphQL carries what the code puts there", async (t) => {
  // test/graphql/workflows.test.ts reads them there: extensions.issues, extensions.retryAfter.
  const workflows = readFileSync(path.join(DOCS, "workflows.md"), "utf8");
  const row = (code: string) =>
    workflows.split("\n").find((line) => line.startsWith(`| \`${code}\``));
  t.match(row("WF_VALIDATION"), /`extensions\.issues` over GraphQL/);
  t.match(row("WF_LOCKED"), /`Retry-After: 1` over HTTP, `extensions\.retryAfter: 1` in GraphQL/);
});
