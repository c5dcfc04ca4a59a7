import { cpSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { launchChromium, withoutChromium } from "../support/browser.ts";
import { DEMO_PASSWORD, startAccountsAnnal } from "../support/accounts.ts";
import { Browserless, form } from "../support/browserless.ts";
import { eventually } from "../support/eventually.ts";
import { writeDefinition } from "../support/workflow.ts";

/**
 * The web application as a newcomer meets it (issue 36, item 8), in Debian's Chromium: sign-in
 * lands in /app; the demo's access request started from a form built from its JSON Schema,
 * with a directory picker for the group; an instance page that updates itself and says who
 * must act; the inbox naming people, with labelled data; a group's membership diff and the
 * Changes feed naming the member added; multi-language values; the sticky top bar; a lost
 * connection as a banner. Screenshots go to $ANNAL_SCREENSHOTS (default: the temp directory).
 */
const REPO = path.resolve(import.meta.dirname, "../..");
const SCREENSHOTS = process.env["ANNAL_SCREENSHOTS"] ?? path.join(tmpdir(), "annal-web-shots");

t.setTimeout(300_000);

const ON_CALL = "cn=on-call,ou=groups,dc=example,dc=org";

/** A definition whose parameters have a choice: the form offers it as one. */
const BADGE = `
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "order-badge",
  version: 1,
  title: "Order a badge",
  parameters: z
    .object({
      kind: z.enum(["visitor", "contractor", "staff"]).meta({ title: "Kind of badge" }),
    })
    .meta({ description: "A badge for the office doors, sent to you by post." }),
  access: { start: [] },
  async run(flow, { kind }) {
    return { kind };
  },
});
`;

t.test(
  "in Chromium: land in /app, start from a schema form with a group picker, a live instance page, people by name, the members added, languages, a sticky bar, a lost connection",
  { skip: withoutChromium },
  async (t) => {
    const dir = path.join(REPO, ".tap/fixtures", `web-people-${process.pid}`);
    cpSync(path.join(REPO, "ops/demo/workflows"), dir, { recursive: true });
    writeDefinition(dir, "order-badge.ts", BADGE);
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(SCREENSHOTS, { recursive: true });
    const app = await startAccountsAnnal(t, {
      captureInterval: "1s",
      extraToml: `[[directory.types]]
name = "group"
base = "ou=groups,dc=example,dc=org"
filter = "(objectClass=groupOfNames)"

[workflows]
dir = "${dir}"
timerInterval = "200ms"
`,
    });

    // Where the login form sends a person: their own path, never another site, else /app.
    const landing = async (returnTo: string | undefined) => {
      const answer = await new Browserless().request(`${app.url}/auth/login/ldap`, {
        method: "POST",
        body: form({
          login: "owojcik",
          password: DEMO_PASSWORD,
          ...(returnTo === undefined ? {} : { returnTo }),
        }),
        headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url },
      });
      return answer.headers.get("location");
    };
    t.equal(await landing(undefined), "/app", "no returnTo: the web application");
    t.equal(await landing("/app/inbox"), "/app/inbox", "a path of annal's own");
    t.equal(await landing("//evil.example/app"), "/app", "not another host");
    t.equal(await landing("https://evil.example/"), "/app", "not another site");
    t.equal(await landing("/\\evil.example"), "/app", "not a backslash host");

    const context = await launchChromium(t, { viewport: { width: 1280, height: 860 } });
    const page = context.pages()[0] ?? (await context.newPage());
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page: ${error.message}`));
    page.on("response", (response) => {
      if (response.status() >= 500) problems.push(`${response.status()} ${response.url()}`);
    });
    const shot = (name: string) =>
      page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
    const ready = () => page.locator("main[data-ready]").waitFor();
    const signIn = async (login: string, returnTo?: string) => {
      await page.goto(
        `${app.url}/auth/login${returnTo ? `?returnTo=${encodeURIComponent(returnTo)}` : ""}`,
      );
      await page.fill("#login", login);
      await page.fill("#password", DEMO_PASSWORD);
      await page.click("#ldap button[type=submit]");
    };

    // Signed in from the login page itself, Kateřina lands in the application, not on a
    // session page.
    await signIn("krossi");
    await page.waitForURL(`${app.url}/app/directory`);
    await ready();
    t.equal(await page.locator("#who").textContent(), "Kateřina Rossi");

    // Each workflow's card says what it is for: the parameters' own description, else what it
    // asks for.
    await page.goto(`${app.url}/app/workflows`);
    await page.locator("#catalog").waitFor();
    const cardOf = (title: string) => page.locator("#catalog li", { hasText: title });
    t.equal(
      await cardOf("Order a badge").locator(".description").textContent(),
      "A badge for the office doors, sent to you by post.",
    );
    t.equal(
      await cardOf("Ask to join a group").locator(".description").textContent(),
      "Asks for group and reason.",
    );
    t.match(await cardOf("Ask to join a group").textContent(), /Anyone signed in may start it/);
    await shot("start-catalog");

    // An enum is a choice of its values, under the schema's title.
    await page.goto(`${app.url}/app/workflows/order-badge`);
    await page.locator("#start-form").waitFor();
    const kind = page.getByLabel("Kind of badge");
    t.same(await kind.locator("option").allTextContents(), ["visitor", "contractor", "staff"]);

    // The start form from the parameters' JSON Schema: titles, descriptions, a group picker.
    await page.goto(`${app.url}/app/workflows/access-request`);
    await page.locator("#start-form").waitFor();
    t.same(
      (await page.locator("#start-form label").allTextContents()).map((l) => l.replace(" *", "")),
      ["Group", "Reason"],
      "the schema's titles as labels",
    );
    t.match(await page.locator("#start-form").textContent(), /type part of its name and pick it/);
    const group = page.getByRole("combobox", { name: "Group" });
    await group.pressSequentially("on-c");
    const option = page.getByRole("option", { name: /on-call/ });
    await option.waitFor();
    t.equal(await option.getAttribute("data-dn"), ON_CALL, "found as she types");
    t.match(await option.textContent(), /Engineers on the on-call rota/);
    await shot("start-form-picker");
    await option.click();
    t.match(await page.locator(".picker .picked").textContent(), /cn=on-call/);
    await page.getByLabel("Reason").fill("I join the support rota in March");
    await page.click("#start-form button[type=submit]");

    // The instance page updates itself until the owner's question is open, and names her.
    await page.waitForURL(/\/app\/instances\/[0-9a-f-]+$/);
    const instanceUrl = page.url();
    const instanceId = instanceUrl.split("/").pop()!;
    const waiting = page.locator("#waiting-on");
    await waiting.locator(".person", { hasText: "Priya Rossi" }).waitFor({ timeout: 60_000 });
    t.match(await waiting.textContent(), /“approve” waits for Priya Rossi/);
    t.equal(await page.locator("#instance-state").textContent(), "WAITING");
    t.match(
      await page.locator("dd", { hasText: "by" }).first().textContent(),
      /Kateřina Rossi/,
      "who started it, by name",
    );
    t.notMatch(await page.locator("main").textContent(), /groupName|"reason"/, "no raw keys");
    await shot("instance-waiting");

    // The top bar stays in view as the page scrolls.
    await page.setViewportSize({ width: 1280, height: 400 });
    await page.mouse.wheel(0, 2000);
    await eventually(async () => ((await page.evaluate<number>("window.scrollY")) > 100 ? 1 : 0), {
      what: "the page to scroll",
    });
    t.equal((await page.locator("header#top").boundingBox())?.y, 0, "the bar at the top");
    t.ok(await page.locator("#nav").isVisible(), "the navigation in view");
    await page.setViewportSize({ width: 1280, height: 860 });

    // Priya's inbox names the requester and labels what the workflow shows.
    await page.click("header .who button");
    await signIn("prossi", "/app/inbox");
    await page.waitForURL(`${app.url}/app/inbox`);
    const card = page.locator(`#inbox li[data-dialog="${instanceId}.2"]`);
    await card.waitFor();
    await card.locator(".requester .person", { hasText: "Kateřina Rossi" }).waitFor();
    t.same(
      (await card.locator("dl.data > dt").allTextContents()).sort(),
      ["Group", "Reason", "Requester"],
      "labels, not keys; the group once, by its name",
    );
    const groupValue = card.locator('dl.data > dt[data-key="group"] + dd .person');
    t.equal(await groupValue.textContent(), "on-call");
    t.equal(await groupValue.getAttribute("title"), ON_CALL, "its DN on hover");
    // The card takes the page's width, beside nothing else.
    const cardBox = (await card.boundingBox())!;
    const mainBox = (await page.locator("main").boundingBox())!;
    t.ok(cardBox.width > mainBox.width * 0.8, `the card is ${cardBox.width} of ${mainBox.width}`);
    await card.locator("dl.data > dd .person", { hasText: "Kateřina Rossi" }).waitFor();
    t.equal(
      await card
        .locator("dl.data > dd .person", { hasText: "Kateřina Rossi" })
        .getAttribute("title"),
      "uid=krossi,ou=sales,ou=people,dc=example,dc=org",
      "the DN on hover",
    );
    await shot("inbox-named");

    // Her instance page, open while she approves elsewhere, turns COMPLETED by itself and
    // shows its deadlines as met.
    await page.goto(instanceUrl);
    await waiting.waitFor();
    const priya = new Browserless();
    await priya.request(`${app.url}/auth/login/ldap`, {
      method: "POST",
      body: form({ login: "prossi", password: DEMO_PASSWORD }),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url },
    });
    const cookie = `service_session=${priya.cookie(new URL(app.url).host, "service_session")}`;
    const answered = await app.graphql(
      `mutation($id: ID!) { completeDialog(id: $id, answer: { approved: true }) { state } }`,
      { cookie },
      { id: `${instanceId}.2` },
    );
    t.notOk(answered.body.errors, "approved");
    await page.locator("#instance-state", { hasText: "COMPLETED" }).waitFor({ timeout: 60_000 });
    t.equal(await waiting.count(), 0, "nobody must act any more");
    const statuses = await page
      .locator("#instance-deadlines li")
      .evaluateAll((items) => items.map((item) => item.getAttribute("data-status")));
    t.ok(statuses.length >= 2, "the instance's deadline and the dialog's");
    t.ok(
      statuses.every((status) => status === "met" || status === "void"),
      `met or not applying, none pending: ${statuses.join(", ")}`,
    );
    t.ok(statuses.includes("met"));
    t.notMatch(await page.locator("#instance-deadlines").textContent(), /pending|passed/);
    await shot("instance-completed");

    // The group's history: the member added, not two lists of every member.
    const groups = await fetch(
      `${app.url}/api/entries/groups?filter=${encodeURIComponent("(cn=on-call)")}&fields=cn`,
      { headers: { cookie } },
    );
    const onCall: string = ((await groups.json()) as { nodes: { entryUUID: string }[] }).nodes[0]!
      .entryUUID;
    const memberRow = page.locator("#diff tr.changed", { hasText: "member" });
    await eventually(
      async () => {
        await page.goto(`${app.url}/app/directory/groups/${onCall}/history`);
        await ready();
        return (await memberRow.count()) > 0 ? true : undefined;
      },
      { what: "the membership in the group's history", timeout: 60_000 },
    );
    t.equal(await memberRow.locator(".removed-value").count(), 0, "nobody removed");
    t.equal(await memberRow.locator(".added-value").count(), 1, "one member added");
    await memberRow.locator(".added-value .person", { hasText: "Kateřina Rossi" }).waitFor();
    t.match(await memberRow.locator(".kept").textContent(), /\d+ values? unchanged/);
    await page.locator("#timeline .member-added .person", { hasText: "Kateřina Rossi" }).waitFor();
    await shot("group-diff");

    // The Changes feed names the member added, the DN on hover.
    await page.click("#nav >> text=Changes");
    const added = page.locator("#feed .member-added .person", { hasText: "Kateřina Rossi" });
    await added.first().waitFor();
    t.equal(
      await added.first().getAttribute("title"),
      "uid=krossi,ou=sales,ou=people,dc=example,dc=org",
    );
    await shot("feed-member");

    // The group itself: its description in the viewer's language, the others on demand; its
    // members' DNs break at commas, not inside a name.
    await page.goto(`${app.url}/app/directory/groups/${onCall}`);
    await ready();
    const description = page.locator("table.attributes tr", { hasText: "description" });
    t.match(
      await description.locator(".localized").textContent(),
      /^Engineers on the on-call rota/,
    );
    t.notMatch(await description.textContent(), /en~|\|de~/, "not the raw value");
    t.equal(await description.locator("details.languages").getAttribute("open"), null);
    await description.locator("details.languages summary").click();
    t.match(await description.locator("details.languages").textContent(), /Rufbereitschaft/);
    const member = page
      .locator("table.attributes tr", { hasText: "member" })
      .locator(".dn")
      .first();
    t.ok((await member.locator("wbr").count()) >= 3, "a break after each comma");
    await page
      .locator("table.attributes tr", { hasText: "member" })
      .locator(".named-dn .person", { hasText: "Kateřina Rossi" })
      .waitFor();
    t.equal(
      await member.evaluate(
        (element) => element.ownerDocument.defaultView!.getComputedStyle(element).overflowWrap,
      ),
      "break-word",
      "no break inside a part that fits",
    );
    // At a phone's width the DN takes several lines, and each of its parts is on one of them.
    await page.setViewportSize({ width: 390, height: 844 });
    const linesOf = () =>
      member.evaluate((element) =>
        [...element.childNodes]
          .filter((node) => node.nodeType === 3)
          .map((node) => {
            const range = element.ownerDocument.createRange();
            range.selectNodeContents(node);
            return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
          }),
      );
    const lines = await linesOf();
    t.ok(lines.length >= 4, "the DN in its parts");
    t.ok(
      lines.every((count) => count === 1),
      `no part broken over two lines: ${lines.join(",")}`,
    );
    const height = (await member.boundingBox())!.height;
    t.ok(height > 25, "the DN wraps at this width");
    await shot("group-languages-phone");
    await page.setViewportSize({ width: 1280, height: 860 });

    // A lost connection is a banner that says so, not the browser's "Failed to fetch".
    await context.setOffline(true);
    await page.click("#nav >> text=Changes");
    const banner = page.locator("#connection-lost");
    await banner.waitFor();
    t.match(await banner.textContent(), /Connection lost/);
    t.notMatch(await page.locator("body").textContent(), /Failed to fetch/);
    await shot("connection-lost");
    // Back online, the banner goes by itself, and the pages load again.
    await context.setOffline(false);
    await banner.waitFor({ state: "detached" });
    await page.click("#nav >> text=Directory");
    await ready();
    t.equal(await banner.count(), 0);
    await page.locator("#results-heading").waitFor();

    t.same(problems, [], "no page errors and no 5xx along the way");
  },
);
