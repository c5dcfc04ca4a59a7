import { readFileSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { TestInstance, WorkflowTest } from "../../src/testing/index.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const DOC = readFileSync(path.join(ROOT, "docs/testing-workflows.md"), "utf8");

/** What the driver's own classes use of each other: not for a test to call. */
const INTERNAL = new Set(["constructor", "actor", "deps", "isRegistered"]);

function publicMembers(prototype: object): string[] {
  return Object.getOwnPropertyNames(prototype).filter((name) => !INTERNAL.has(name));
}

t.test("docs/testing-workflows.md names every call of the driver", async (t) => {
  for (const [owner, prototype] of [
    ["test", WorkflowTest.prototype],
    ["flow", TestInstance.prototype],
  ] as const) {
    for (const name of publicMembers(prototype)) {
      t.match(DOC, `\`${owner}.${name}(`, `${owner}.${name} is in the table`);
    }
  }
});

t.test("docs/testing-workflows.md names every option of workflowTest", async (t) => {
  const source = readFileSync(path.join(ROOT, "src/testing/driver.ts"), "utf8");
  const body = /export interface WorkflowTestOptions \{([\s\S]*?)\n\}/.exec(source)?.[1] ?? "";
  const options = [...body.matchAll(/^ {2}readonly (\w+)\??:/gm)].map((match) => match[1]!);
  t.same(options.sort(), ["accounts", "calendars", "fixtures", "workflows"]);
  const calls = DOC.split("\n").filter((line) => line.includes("workflowTest({"));
  for (const option of options) {
    t.ok(
      calls.some((line) => new RegExp(`workflowTest\\(\\{[^}]*\\b${option}\\b`).test(line)),
      `${option} is in the table`,
    );
  }
  t.match(DOC, /## Business time/, "and business time has a section");
});
