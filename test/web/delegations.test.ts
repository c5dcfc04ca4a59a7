import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { launchChromium, withoutChromium } from "../support/browser.ts";
import { DEMO_PASSWORD, startAccountsAnnal } from "../support/accounts.ts";
import { Browserless, form } from "../support/browserless.ts";
import { writeDefinition } from "../support/workflow.ts";

/**
 * `/app/delegations` in Chromium: a person delegates their dialogs to a colleague from the
 * form, sees it among those given, and ends it. Screenshots go to $ANNAL_SCREENSHOTS.
 */
const REPO = path.resolve(import.meta.dirname, "../..");
const SCREENSHOTS = process.env["ANNAL_SCREENSHOTS"] ?? path.join(tmpdir(), "annal-web-shots");

t.setTimeout(300_000);

const NOTHING = `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "nothing",
  version: 1,
  parameters: z.object({}),
  async run(flow) {
    return await flow.step("nothing", async () => "done");
  },
});
`;

t.test(
  "in Chromium: make a delegation on /app/delegations and end it",
  { skip: withoutChromium },
  async (t) => {
    const dir = path.join(REPO, ".tap/fixtures", `web-delegations-${process.pid}`);
    writeDefinition(dir, "nothing.ts", NOTHING);
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(SCREENSHOTS, { recursive: true });
    const app = await startAccountsAnnal(t, {
      extraToml: `[workflows]\ndir = "${dir}"\ntimerInterval = "200ms"\n`,
    });
    // An account is made at its first sign-in: owojcik signs in once, so he can be named.
    const first = await new Browserless().request(`${app.url}/auth/login/ldap`, {
      method: "POST",
      body: form({ login: "owojcik", password: DEMO_PASSWORD }),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url },
    });
    t.equal(first.status, 303, "owojcik signed in once");
    const context = await launchChromium(t, { viewport: { width: 1280, height: 860 } });
    const page = context.pages()[0] ?? (await context.newPage());
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page: ${error.message}`));
    await page.goto(`${app.url}/auth/login?returnTo=${encodeURIComponent("/app/delegations")}`);
    await page.fill("#login", "prossi");
    await page.fill("#password", DEMO_PASSWORD);
    await page.click("#ldap button[type=submit]");
    await page.waitForURL(`${app.url}/app/delegations`);
    await page.locator("#delegate-form").waitFor();
    t.match(await page.locator("main").textContent(), /You have delegated nothing/);

    await page.fill("#delegate-form input[name=to]", "owojcik");
    await page.fill("#delegate-form input[name=until]", "now+7d");
    await page.click("#delegate-form button[type=submit]");
    const row = page.locator("#given tr[data-delegation]");
    await row.waitFor();
    t.match(await row.textContent(), /owojcik.*active/);
    await page.screenshot({ path: path.join(SCREENSHOTS, "delegations.png"), fullPage: true });

    await row.getByRole("button", { name: "End now" }).click();
    await page.locator("#given tr[data-delegation] td", { hasText: "ended" }).waitFor();

    await page.fill("#delegate-form input[name=to]", "prossi");
    await page.fill("#delegate-form input[name=until]", "now+1d");
    await page.click("#delegate-form button[type=submit]");
    await page.locator("#delegate-form [role=alert], #delegate-form .error").first().waitFor();
    t.match(await page.locator("#delegate-form").textContent(), /themselves/);
    t.same(problems, []);
  },
);
