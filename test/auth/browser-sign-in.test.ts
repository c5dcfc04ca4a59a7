import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { launchChromium, withoutChromium } from "../support/browser.ts";
import { DEMO_PASSWORD, PROSSI, startAccountsAnnal } from "../support/accounts.ts";

// The demo's sign-in as a newcomer meets it, in Debian's Chromium driven by playwright-core:
// annal's login page, the demo OpenID provider's form, back to annal with the cookie set.
const SCREENSHOTS = process.env["ANNAL_SCREENSHOTS"] ?? tmpdir();

t.setTimeout(240_000);

t.test(
  "in Chromium: the login page, the provider's form, back with service_session, and GraphQL's viewer is the person",
  { skip: withoutChromium },
  async (t) => {
    const app = await startAccountsAnnal(t);
    const context = await launchChromium(t);
    const page = context.pages()[0] ?? (await context.newPage());
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page: ${error.message}`));
    page.on("response", (response) => {
      if (response.status() >= 500) problems.push(`${response.status()} ${response.url()}`);
    });

    await page.goto(`${app.url}/auth/login`);
    t.equal(await page.locator("h1").textContent(), "Sign in to annal");
    await page.screenshot({ path: path.join(SCREENSHOTS, "annal-sign-in-1-login.png") });
    await page.click("#sign-in-oidc");

    await page.locator("#provider-login").waitFor();
    t.equal(new URL(page.url()).origin, app.issuer, "at the provider");
    await page.fill("#login", "prossi");
    await page.fill("#password", DEMO_PASSWORD);
    await page.screenshot({ path: path.join(SCREENSHOTS, "annal-sign-in-2-provider.png") });
    await page.click("#provider-login button[type=submit]");

    // Signed in from the login page itself, the person lands in the web application.
    await page.waitForURL(`${app.url}/app/directory`);
    await page.locator("main[data-ready]").waitFor();
    t.equal(await page.locator("#who").textContent(), "Priya Rossi", "back at annal, in /app");
    await page.screenshot({ path: path.join(SCREENSHOTS, "annal-sign-in-3-session.png") });

    const cookies = await context.cookies(app.url);
    const session = cookies.find((cookie) => cookie.name === "service_session");
    t.ok(session, "the cookie is set");
    t.equal(session?.httpOnly, true);
    t.equal(session?.sameSite, "Lax");
    t.equal(
      await page.evaluate("document.cookie.includes('service_session')"),
      false,
      "scripts cannot read it",
    );

    // GraphQL from annal's own page (GraphiQL's origin), with nothing but the cookie.
    await page.goto(`${app.url}/graphql`);
    const answer = await page.evaluate(async () => {
      const response = await fetch("/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          query:
            "{ viewer { dn authInfo { person { name displayName origin dn } access credential } } }",
        }),
      });
      return response.json();
    });
    // The page's answer as it came (its `extensions` name the log position it reflects).
    t.same(
      { data: (answer as { data?: unknown }).data },
      {
        data: {
          viewer: {
            dn: PROSSI,
            authInfo: {
              person: {
                name: "prossi",
                displayName: "Priya Rossi",
                origin: "demo-sso",
                dn: PROSSI,
              },
              access: ["auditor", "export", "operator", "read", "write"],
              credential: "session",
            },
          },
        },
      },
    );

    // GraphiQL, for the signed-in person, runs queries as them without a token.
    await page.locator(".graphiql-container").waitFor();
    t.match(await page.locator("#annal-token-state").textContent(), /signed in/);
    await page.evaluate(
      `document.querySelector(".graphiql-query-editor .CodeMirror").CodeMirror.setValue(${JSON.stringify(
        "{ viewer { authInfo { person { displayName } } } }",
      )})`,
    );
    await page.click(".graphiql-execute-button");
    await page.locator(".graphiql-response", { hasText: "Priya Rossi" }).waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, "annal-sign-in-4-graphiql.png") });

    // Signing out ends the session: the same query is then UNAUTHENTICATED.
    await page.goto(`${app.url}/auth/session`);
    await page.click("form[action='/auth/logout'] button");
    await page.locator("h1", { hasText: "Signed out" }).waitFor();
    await page.goto(`${app.url}/graphql`);
    const after: { errors: { extensions: { code: string } }[] } = await page.evaluate(async () => {
      const response = await fetch("/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ viewer { id } }" }),
      });
      return (await response.json()) as { errors: { extensions: { code: string } }[] };
    });
    t.equal(after.errors[0]?.extensions.code, "UNAUTHENTICATED");
    t.same(problems, [], "no page errors and no 5xx along the way");
  },
);
