import { rmSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { launchChromium, withoutChromium } from "../support/browser.ts";
import { DEMO_PASSWORD, startAccountsAnnal } from "../support/accounts.ts";
import { Browserless, signInWithOidc } from "../support/browserless.ts";
import { writeDefinition } from "../support/workflow.ts";

t.setTimeout(240_000);

const REPO = path.resolve(import.meta.dirname, "../..");

const BADGE = `
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "order-badge",
  version: 1,
  title: "Order a badge",
  parameters: z.object({ kind: z.enum(["visitor", "staff"]).meta({ title: "Kind of badge" }) }),
  access: { start: [] },
  async run(flow, { kind }) {
    return { kind };
  },
});
`;

// A person signed in with demo-sso whose provider no longer knows their grant (revoked,
// expired): a command they make is refused, and the page tells them to sign in again, with
// a link that brings them back, instead of an error code to puzzle over.
t.test(
  "in Chromium: when the provider refuses to renew a sign-in, the page says to sign in again",
  { skip: withoutChromium },
  async (t) => {
    const dir = path.join(REPO, ".tap/fixtures", `web-sign-in-again-${process.pid}`);
    writeDefinition(dir, "order-badge.ts", BADGE);
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const app = await startAccountsAnnal(t, { extraToml: `[workflows]\ndir = "${dir}"\n` });
    const browser = new Browserless();
    await signInWithOidc(browser, app.url, "prossi", DEMO_PASSWORD);
    const cookie = browser.cookie(new URL(app.url).host, "service_session")!;

    const context = await launchChromium(t, { viewport: { width: 1100, height: 700 } });
    await context.addCookies([{ name: "service_session", value: cookie, url: app.url }]);
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${app.url}/app/workflows/order-badge`);
    await page.locator("#start-form").waitFor();

    await app.db.pool.query("DELETE FROM demo_oidc WHERE model <> '_secrets'");
    await app.db.pool.query(
      "UPDATE account_principals SET refreshed_at = now() - interval '1 day'",
    );
    await page.click("#start-form button[type=submit]");
    const notice = page.locator(".sign-in-again");
    await notice.waitFor();
    t.match(await notice.textContent(), /Please sign in again/);
    t.match(await notice.textContent(), /answered invalid_grant/, "what the provider said");
    t.equal(
      await notice.getByRole("link", { name: "Sign in again" }).getAttribute("href"),
      `/auth/login?returnTo=${encodeURIComponent("/app/workflows/order-badge")}`,
    );
    t.notMatch(await page.locator("main").textContent(), /WF_AUTHORIZATION_DENIED/);
    await page.screenshot({ path: path.join(dir, "..", `sign-in-again-${process.pid}.png`) });
  },
);
