import { writeFile } from "node:fs/promises";
import path from "node:path";
import t from "tap";
import { eventually } from "../support/eventually.ts";
import { call, startRulesAnnal } from "./support.ts";

t.setTimeout(240_000);

const rules = (greeting: string) => `import { defineEndpoints } from "annal";
import { who } from "./who.ts";
export const endpoints = defineEndpoints(({ app }) => {
  app.get("/greeting", (c) => c.text("${greeting}, " + who(c.env.viewer.account?.name)));
});
`;
const who = (form: string) => `export const who = (name: string | undefined) => \`${form}\`;\n`;

t.test(
  "in development the rules file and its imports are watched and the routes swapped",
  async (t) => {
    const app = await startRulesAnnal(t, {
      files: { "rules/index.ts": rules("Hello"), "rules/who.ts": who("${name}") },
      development: true,
    });
    const token = await app.token(["read"], "dev");
    const greeting = async () => (await call(`${app.url}/api/greeting`, { token })).text();
    t.equal(await greeting(), "Hello, dev");

    await writeFile(path.join(app.dir, "rules/index.ts"), rules("Bonjour"));
    await eventually(async () => (await greeting()) === "Bonjour, dev", {
      what: "the edited rules file",
    });
    t.pass("an edit of the rules file is served without a restart");

    await writeFile(path.join(app.dir, "rules/who.ts"), who("dear ${name}"));
    await eventually(async () => (await greeting()) === "Bonjour, dear dev", {
      what: "the edited import",
    });
    t.pass("an edit of a file it imports too");

    // A file that does not bundle keeps the routes served before, and the log says why.
    await writeFile(
      path.join(app.dir, "rules/index.ts"),
      `${rules("Hola")}\nexport const broken = ;\n`,
    );
    const logged = await eventually(
      () => app.logged.lines.find((line) => line.code === "ANNAL_RULES_INVALID"),
      { what: "the failed reload is logged" },
    );
    t.match(logged, {
      file: path.join(app.dir, "rules/index.ts"),
      line: 7,
      msg: /rules not reloaded/,
    });
    t.equal(await greeting(), "Bonjour, dear dev");

    // A route that would take annal's path is refused the same way.
    await writeFile(
      path.join(app.dir, "rules/index.ts"),
      `${rules("Hola")}\nexport const other = 1;\n`.replace(
        'app.get("/greeting"',
        'app.get("/changes", (c) => c.text("mine"));\n  app.get("/greeting"',
      ),
    );
    await eventually(
      () => app.logged.lines.find((line) => line.code === "ANNAL_RULES_ROUTE_CONFLICT"),
      {
        what: "the conflicting reload is logged",
      },
    );
    t.equal(await greeting(), "Bonjour, dear dev");

    // Fixed: served again.
    await writeFile(path.join(app.dir, "rules/index.ts"), rules("Hola"));
    await eventually(async () => (await greeting()) === "Hola, dear dev", {
      what: "the fixed rules file",
    });
    t.pass("a fixed file is served");
  },
);
