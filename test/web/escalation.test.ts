import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { createToken } from "../../src/auth/index.ts";
import { advanceDatabaseClock } from "../../src/workflow/index.ts";
import { launchChromium, withoutChromium } from "../support/browser.ts";
import { DEMO_PASSWORD, startAccountsAnnal } from "../support/accounts.ts";
import { writeDefinition } from "../support/workflow.ts";

/**
 * A dialog's escalation chain in the web application, in Debian's Chromium: the inbox card of
 * the person a level reassigned the dialog to, and the instance page, list the chain's levels
 * with their moments, mark the one standing now, name whom each asked, and end with the
 * chain's final. Screenshots go to $ANNAL_SCREENSHOTS (default: the temp directory).
 */
const REPO = path.resolve(import.meta.dirname, "../..");
const SCREENSHOTS = process.env["ANNAL_SCREENSHOTS"] ?? path.join(tmpdir(), "annal-web-shots");
const PROSSI = "uid=prossi,ou=engineering,ou=people,dc=example,dc=org";
const OWOJCIK = "uid=owojcik,ou=engineering,ou=people,dc=example,dc=org";
const OPERATORS = "cn=annal-operators,ou=roles,dc=example,dc=org";

t.setTimeout(300_000);

const CHAIN = `
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "chain",
  version: 1,
  parameters: z.object({}),
  async run(flow) {
    const { answer } = await flow.dialog({
      name: "approve",
      assignees: [${JSON.stringify(PROSSI)}],
      schema: z.object({ approved: z.boolean() }),
      data: { what: "a new laptop" },
      escalation: {
        levels: [
          { after: "1h", assignees: [${JSON.stringify(OWOJCIK)}] },
          { after: "2h", assignees: [${JSON.stringify(OPERATORS)}], mode: "add" },
        ],
        final: { after: "1h" },
      },
    });
    return answer;
  },
});
`;

t.test(
  "in Chromium: the inbox and the instance page show the escalation chain and where it stands",
  { skip: withoutChromium },
  async (t) => {
    const dir = path.join(REPO, ".tap/fixtures", `web-escalation-${process.pid}`);
    writeDefinition(dir, "chain.ts", CHAIN);
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(SCREENSHOTS, { recursive: true });
    const app = await startAccountsAnnal(t, {
      extraToml: `[workflows]\ndir = "${dir}"\ntimerInterval = "200ms"\n`,
    });
    const { token } = await createToken(app.db.pool, app.store, { name: "starter", access: [] });
    const started = await app.graphql(
      `mutation { startWorkflow(name: "chain", parameters: {}) { id } }`,
      { authorization: `Bearer ${token}` },
    );
    const id = (started.body as { data: { startWorkflow: { id: string } } }).data.startWorkflow.id;

    const context = await launchChromium(t, { viewport: { width: 1280, height: 860 } });
    const page = context.pages()[0] ?? (await context.newPage());
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page: ${error.message}`));
    const shot = (name: string) =>
      page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
    const signIn = async (login: string, returnTo: string) => {
      await page.goto(`${app.url}/auth/login?returnTo=${encodeURIComponent(returnTo)}`);
      await page.fill("#login", login);
      await page.fill("#password", DEMO_PASSWORD);
      await page.click("#ldap button[type=submit]");
      await page.waitForURL(`${app.url}${returnTo}`);
    };

    // Priya is asked first: the opening stands now, the levels are ahead.
    await signIn("prossi", "/app/inbox");
    const card = page.locator(`#inbox li[data-dialog="${id}.1"]`);
    await card.waitFor();
    const chain = card.locator("ol.escalation");
    t.same(
      await chain.locator("li").evaluateAll((items) => items.map((li) => li.dataset["status"])),
      ["now", "ahead", "ahead", "ahead"],
      "opened, two levels, the final",
    );
    // Who a level asks is found when it comes: the page says so, not "someone else".
    t.match(
      await chain.locator('li[data-level="1"]').textContent(),
      /asks whom the workflow finds then, instead/,
    );
    t.match(await card.locator(".asked").textContent(), /^asked: you alone$/);
    t.match(await chain.locator('li[data-level="final"]').textContent(), /times out/);
    await shot("inbox-escalation-ahead");

    // An hour later the first level reassigns it to Olga: her inbox marks that level as now,
    // naming her; Priya's no longer lists it.
    await advanceDatabaseClock(app.db.pool, 3_600_000 + 1_000);
    await page.click("header .who button");
    await signIn("owojcik", "/app/inbox");
    const hers = page.locator(`#inbox li[data-dialog="${id}.1"] ol.escalation`);
    await hers.waitFor({ timeout: 60_000 });
    t.same(
      await hers.locator("li").evaluateAll((items) => items.map((li) => li.dataset["status"])),
      ["passed", "now", "ahead", "ahead"],
    );
    await hers.locator('li[data-level="1"] .person', { hasText: "Olga" }).waitFor();
    await shot("inbox-escalation-now");

    // The instance page shows the same chain under its dialog.
    await page.goto(`${app.url}/app/instances/${id}`);
    const dialogs = page.locator("#instance-dialogs ol.escalation");
    await dialogs.waitFor();
    t.equal(await dialogs.locator('li[data-status="now"]').getAttribute("data-level"), "1");
    await dialogs.locator('li[data-level="1"] .person', { hasText: "Olga" }).waitFor();
    await shot("instance-escalation");
    t.same(problems, [], "no page errors");
  },
);
