import { existsSync } from "node:fs";
import t from "tap";
import { chromium, type Browser } from "playwright-core";
import { eventually } from "../support/eventually.ts";
import { startGateway } from "../support/graphql-gateway.ts";

// GraphiQL as a user meets it, in a real browser: Debian's chromium, driven by playwright-core.
const CHROMIUM = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium";

t.setTimeout(240_000);

t.test("GraphiQL serves its own files and no placeholder header", async (t) => {
  const gateway = await startGateway(t, { directory: false });
  const page = await gateway.server.inject({
    method: "GET",
    url: "/graphql",
    headers: { accept: "text/html" },
  });
  t.equal(page.statusCode, 200);
  t.notMatch(page.body, /Bearer annal_\.\.\./, "no placeholder header");
  t.notMatch(page.body, /https?:\/\//, "nothing from another origin");
  t.match(page.headers["content-security-policy"], /script-src 'self'/);
  for (const file of ["react.js", "react-dom.js", "graphiql.js", "graphiql.css", "annal.js"]) {
    const asset = await gateway.server.inject({ method: "GET", url: `/graphql/assets/${file}` });
    t.equal(asset.statusCode, 200, file);
  }
  const missing = await gateway.server.inject({ method: "GET", url: "/graphql/assets/x.js" });
  t.equal(missing.statusCode, 404);
});

t.test(
  "GraphiQL in Chromium: no error before a token, the token pasted once, then queries and docs",
  { skip: existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium)` },
  async (t) => {
    const gateway = await startGateway(t);
    const base = await gateway.server.listen({ host: "127.0.0.1", port: 0 });
    const browser: Browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox"],
    });
    t.teardown(() => browser.close());
    const page = await browser.newPage();
    const problems: string[] = [];
    const elsewhere: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()}`);
    });
    page.on("pageerror", (error) => problems.push(`page: ${error.message}`));
    page.on("response", (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.protocol !== "data:" && url.hostname !== "127.0.0.1") elsewhere.push(request.url());
    });
    const graphqlBodies: string[] = [];
    page.on("response", (response) => {
      if (new URL(response.url()).pathname !== "/graphql" || response.request().method() !== "POST")
        return;
      response.text().then(
        (body) => graphqlBodies.push(body),
        // The reload below can navigate away before a body is read; the page asks again.
        () => {},
      );
    });

    await page.goto(`${base}/graphql`);
    await page.locator(".graphiql-container").waitFor();
    t.match(
      await page.locator("#annal-token-state").textContent(),
      /paste a token/,
      "says what to do first",
    );
    t.same(graphqlBodies, [], "no request (and so no error) before a token is set");

    await page.fill("#annal-token-input", gateway.tokens.read);
    await page.click("#annal-token button[type=submit]");
    t.equal(
      await page.evaluate(() => localStorage.getItem("annal.graphiql.token")),
      gateway.tokens.read,
      "kept in the browser",
    );

    await page.reload(); // pasted once: the token survives a reload
    await page.locator(".graphiql-container").waitFor();
    t.match(await page.locator("#annal-token-state").textContent(), /token set/);
    // The query editor is CodeMirror 5: set its text as a user's typing would end up.
    await page.evaluate(
      `document.querySelector(".graphiql-query-editor .CodeMirror").CodeMirror.setValue(${JSON.stringify(
        "{ viewer { authInfo { name access } } }",
      )})`,
    );
    await page.click(".graphiql-execute-button");
    await eventually(
      async () =>
        ((await page.locator(".graphiql-response").textContent()) ?? "").includes('"reader"'),
      { what: "the query's answer in the response pane" },
    );

    await page.click('button[aria-label="Show Documentation Explorer"]');
    await page.locator(".graphiql-doc-explorer").getByText("Query", { exact: true }).click();
    await eventually(
      async () =>
        ((await page.locator(".graphiql-doc-explorer").textContent()) ?? "").includes("viewer"),
      { what: "the docs explorer listing Query's fields" },
    );
    await page.screenshot({ path: "/tmp/annal-graphiql.png" });

    t.same(problems, [], "no console or page errors");
    t.same(elsewhere, [], "no request leaves 127.0.0.1");
    await eventually(() => graphqlBodies.some((body) => body.includes("__schema")), {
      what: "the schema introspected with the token",
    });
    t.notOk(
      graphqlBodies.some((body) => body.includes('"errors"')),
      "no GraphQL errors along the way",
    );
  },
);
