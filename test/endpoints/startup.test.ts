import { writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import pino from "pino";
import t from "tap";
import { checkConfiguration, startAnnal } from "../../src/app/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import { freePort } from "../../src/ports.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(240_000);

/** A configuration with a database and a rules file of the given text, nothing else. */
async function configWith(
  t: { testdir(): string; teardown(fn: () => unknown): void },
  rules: string,
) {
  const dir = t.testdir();
  await mkdir(path.join(dir, "rules"), { recursive: true });
  await writeFile(path.join(dir, "rules/index.ts"), rules);
  const db = await testDatabase(t);
  await writeFile(
    path.join(dir, "annal.toml"),
    `[server]\nport = ${await freePort()}\n\n[database]\nurl = "${db.url}"\n\n[rules]\nfile = "rules/index.ts"\n`,
  );
  return {
    config: await loadConfig({ configPath: path.join(dir, "annal.toml"), cwd: dir, env: {} }),
    dir,
    db,
  };
}

const route = (line: string) => `import { defineEndpoints } from "annal";
export const endpoints = defineEndpoints(({ app }) => {
  app.get("/fine", (c) => c.text("fine"));
  ${line}
});
`;

t.test("a rule that would take one of annal's paths stops start-up, naming both", async (t) => {
  for (const [line, annalPath] of [
    ['app.get("/entries/:type", (c) => c.text("mine"));', "/api/entries/*"],
    ['app.post("/changes", (c) => c.text("mine"));', "/api/changes"],
    ['app.get("/", (c) => c.text("mine"));', "/api"],
    ['app.get("/:anything", (c) => c.text("mine"));', "/api"],
    ['app.get("/failed-work/:id/retry", (c) => c.text("mine"));', "/api/failed-work/*"],
  ] as const) {
    const { config } = await configWith(t, route(line));
    const started = startAnnal({ config, log: pino({ level: "silent" }) });
    await t.rejects(started, { code: "ANNAL_RULES_ROUTE_CONFLICT", details: { annalPath } }, line);
    await t.rejects(started, {
      message: new RegExp(`would answer ${annalPath.replace("*", "\\*")}`),
    });
  }
});

t.test("middleware and routes beside annal's paths are fine", async (t) => {
  const { config } = await configWith(
    t,
    route(
      'app.use("*", async (c, next) => { await next(); });\n  app.get("/entries-report", (c) => c.text("ok"));',
    ),
  );
  const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
  t.teardown(() => annal.stop());
  t.equal(
    (await fetch(`${annal.url}/api/fine`)).status,
    401,
    "served, and closed without credentials",
  );
});

t.test("in production a rules file that fails stops start-up with the file and line", async (t) => {
  const cases = [
    {
      text: `import { defineEndpoints } from "annal";\nexport const endpoints = defineEndpoints(({ app }) => {\n  app.get("/x", (c) => c.text("x")\n});\n`,
      line: 4,
      problem: /does not bundle/,
    },
    {
      text: `import { defineEndpoints } from "annal";\n\nthrow new Error("no HR system configured");\nexport const endpoints = defineEndpoints(() => {});\n`,
      line: 3,
      problem: /throws while it loads: no HR system configured/,
    },
    {
      text: `import { defineEndpoints } from "annal";\nexport const endpoints = defineEndpoints(({ app }) => {\n  app.get("/x", (c) => c.text("x"));\n  throw new Error("forgot something");\n});\n`,
      line: 4,
      problem: /factory throws: forgot something/,
    },
    { text: `export const routes = {};\n`, line: undefined, problem: /exports no `endpoints`/ },
  ];
  for (const { text, line, problem } of cases) {
    const { config, dir } = await configWith(t, text);
    const file = path.join(dir, "rules/index.ts");
    const started = startAnnal({ config, log: pino({ level: "silent" }) });
    await t.rejects(started, {
      code: "ANNAL_RULES_INVALID",
      message: problem,
      details: { file, ...(line === undefined ? {} : { line }) },
    });
    if (line !== undefined) await t.rejects(started, { message: new RegExp(`^${file}:${line}: `) });
  }
  // annal verify checks what start checks, before the routes are built.
  const { config } = await configWith(t, cases[1]!.text);
  await t.rejects(checkConfiguration(config), { code: "ANNAL_RULES_INVALID" });
});

t.test(
  "endpoints given as an object with fetch: a Hono app of the file's own, or any fetch",
  async (t) => {
    for (const [text, expected] of [
      [
        `import { Hono } from "hono";
import { defineEndpoints, type EndpointBindings } from "annal";
const app = new Hono<{ Bindings: EndpointBindings }>();
app.get("/who", (c) => c.json({ path: c.req.path, who: c.env.viewer.account?.name }));
export const endpoints = defineEndpoints(app);
`,
        { path: "/api/who", who: "fetcher" },
      ],
      [
        `import { defineEndpoints } from "annal";
export const endpoints = defineEndpoints({
  fetch: (request, env) => Response.json({ path: new URL(request.url).pathname, who: env.viewer.account?.name }),
});
`,
        { path: "/who", who: "fetcher" },
      ],
    ] as const) {
      const { config, db } = await configWith(t, text);
      const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
      t.teardown(() => annal.stop());
      const { token } = await createToken(db.pool, await EventStore.open(db.pool), {
        name: "fetcher",
        access: ["read"],
      });
      const answer = await fetch(`${annal.url}/api/who`, {
        headers: { authorization: `Bearer ${token}` },
      });
      t.same(await answer.json(), expected);
      t.equal((await fetch(`${annal.url}/api/who`)).status, 401);
      await annal.stop();
    }
  },
);

t.test("a request's bindings used while the file loads are refused with their code", async (t) => {
  const { config } = await configWith(
    t,
    `import { defineEndpoints } from "annal";
export const endpoints = defineEndpoints(({ app, env }) => {
  const name = env.viewer.account?.name;
  app.get("/name", (c) => c.text(name ?? ""));
});
`,
  );
  await t.rejects(startAnnal({ config, log: pino({ level: "silent" }) }), {
    code: "ANNAL_RULES_INVALID",
    message:
      /:3: its endpoints factory throws: ANNAL_ENDPOINT_OUTSIDE_REQUEST: env.viewer belongs to a request/,
  });
});
