import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import t from "tap";

// The README as a new user meets it: on a fresh machine, in a clone of this repository alone.
const REPO = path.resolve(import.meta.dirname, "..");
const README = readFileSync(path.join(REPO, "README.md"), "utf8");

t.test("the README uses no tool a fresh machine lacks and no history it cannot have", async (t) => {
  t.notMatch(README, /\buuidgen\b/, "uuidgen is not installed by default");
  const atNowLines = README.split("\n").filter((line) => /curl .*[?&]at=now-/.test(line));
  t.same(atNowLines, [], "no at=now-<duration> example: a fresh install has no such history");
  t.match(README, /entries\/users\/\$ID\?at=\$before/, "an at example that works from the start");
  t.match(README, /nodes\[0\]\.entryUUID/, "says where the entryUUID comes from");
});

t.test("the README links and names nothing outside the repository", async (t) => {
  const links = [...README.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
  const paths = [...README.matchAll(/`((?:\.\.?\/)?[\w.-]+\/[\w./*-]+)`/g)].map((m) => m[1]!);
  for (const target of [...links, ...paths]) {
    if (/^[a-z]+:/.test(target) || target.includes("*") || target.includes("<")) continue;
    const resolved = path.resolve(REPO, target);
    t.ok(resolved.startsWith(`${REPO}${path.sep}`), `${target} is inside the repository`);
  }
  for (const link of links.filter((l) => !/^[a-z]+:/.test(l))) {
    const [file, anchor] = link.split("#") as [string, string | undefined];
    const target = path.resolve(REPO, file);
    t.ok(existsSync(target), `${file} exists`);
    if (anchor && existsSync(target)) {
      // GitHub's heading ids: lower case, punctuation dropped, spaces as hyphens.
      const ids = [...readFileSync(target, "utf8").matchAll(/^#+ (.+)$/gm)].map((m) =>
        m[1]!
          .toLowerCase()
          .replace(/[^\p{L}\p{N} -]/gu, "")
          .replace(/ /g, "-"),
      );
      t.ok(ids.includes(anchor), `${file} has a heading #${anchor}`);
    }
  }
});

t.test(
  "the gateway README says what docs/configuration.md says a schema path is relative to",
  async (t) => {
    const gateway = readFileSync(path.join(REPO, "ops/demo/gateway/README.md"), "utf8");
    const schemaLine = gateway.split("\n").find((line) => /^schema = /.test(line));
    t.match(schemaLine, /relative to this annal\.toml's directory/);
    t.match(
      readFileSync(path.join(REPO, "docs/configuration.md"), "utf8"),
      /relative to the configuration file's directory\*\* is for files that go with the configuration \(hooks, the GraphQL schema/,
    );
  },
);

t.test("the at=$before example notes the time a second before the change", async (t) => {
  t.match(README, /before=\$\(date -u \+%Y-%m-%dT%H:%M:%SZ\); sleep 1\n/);
});
