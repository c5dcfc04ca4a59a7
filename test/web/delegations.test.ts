import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { launchChromium, withoutChromium } from "../support/browser.ts";
import { DEMO_PASSWORD, startAccountsAnnal } from "../support/accounts.ts";
import { Browserless, form } from "../support/browserless.ts";
import { writeDefinition } from "../support/workflow.ts";

/**
 * `/app/delegations` in Chromium: a person delegates their dialogs to a colleague from the
 * form (each input named by its label, the form on one row, placeholders as plain hints),
 * sees it among those given, by name, and ends it. The screenshot goes to docs/screenshots
 * (or $ANNAL_SCREENSHOTS).
 */
const REPO = path.resolve(import.meta.dirname, "../..");
const SCREENSHOTS = process.env["ANNAL_SCREENSHOTS"] ?? path.join(REPO, "docs/screenshots");

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

    // Every input is named by its own label.
    const to = page.getByLabel("Delegate my dialogs to");
    const from = page.getByLabel("From", { exact: true });
    const until = page.getByLabel("Until", { exact: true });
    const submit = page.locator("#delegate-form button[type=submit]");
    // The form is one row at this width: the inputs and the button side by side.
    const boxes = await Promise.all([to, from, until, submit].map((l) => l.boundingBox()));
    const bottoms = boxes.map((box) => Math.round(box!.y + box!.height));
    t.ok(
      bottoms.every((bottom) => Math.abs(bottom - bottoms[0]!) <= 2),
      `on one line: ${bottoms.join(", ")}`,
    );
    t.ok(
      boxes.every((box, i) => i === 0 || box!.x > boxes[i - 1]!.x),
      "left to right in the order they are read",
    );
    // A placeholder is a hint in the input's own weight, not a bold label.
    const weights = await page
      .locator("#delegate-form input")
      .evaluateAll((inputs) =>
        inputs.map(
          (input) =>
            input.ownerDocument.defaultView!.getComputedStyle(input, "::placeholder").fontWeight,
        ),
      );
    t.same(weights, ["400", "400", "400"], "placeholders are not bold");

    await to.fill("owojcik");
    await until.fill("now+7d");
    await submit.click();
    const row = page.locator("#given tr[data-delegation]");
    await row.waitFor();
    t.match(await row.textContent(), /active/);
    // The delegate by name, the DN on hover.
    const delegate = row.locator(".person");
    await row.locator(".person[data-named='1']").waitFor();
    t.equal(await delegate.textContent(), "Olga Wójcik");
    t.match(await delegate.getAttribute("title"), /^uid=owojcik,/);
    await page.screenshot({ path: path.join(SCREENSHOTS, "13-delegations.png"), fullPage: true });

    await row.getByRole("button", { name: "End now" }).click();
    await page.locator("#given tr[data-delegation] td", { hasText: "ended" }).waitFor();

    await to.fill("prossi");
    await until.fill("now+1d");
    await page.click("#delegate-form button[type=submit]");
    await page.locator("#delegate-form [role=alert], #delegate-form .error").first().waitFor();
    t.match(await page.locator("#delegate-form").textContent(), /themselves/);
    t.same(problems, []);
  },
);
