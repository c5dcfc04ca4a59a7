import { cpSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { launchChromium, withoutChromium } from "../support/browser.ts";
import type { Page } from "playwright-core";
import { createToken } from "../../src/auth/index.ts";
import { flatColourJpeg } from "../../src/demo/jpeg.ts";
import { signDelivery } from "../../src/hooks/index.ts";
import { DEMO_PASSWORD, PROSSI, startAccountsAnnal } from "../support/accounts.ts";
import { Browserless, form } from "../support/browserless.ts";
import { EntryHistory } from "../support/entries.ts";
import { eventually } from "../support/eventually.ts";
import { writeDefinition } from "../support/workflow.ts";

/**
 * The web application at /app, end to end in Debian's Chromium driven by playwright-core,
 * over annal as `annal start` runs it with the demo directory and the demo OpenID provider:
 * sign in, find a person, look at them a week ago and at their history, approve an access
 * request of the demo's own workflow (ops/demo/workflows/access-request.ts) from the inbox and see the new membership in the person's history with the approval
 * as its cause, watch the change feed update, and retry a failed change event. Each page is
 * written as a screenshot (docs/screenshots/, or $ANNAL_SCREENSHOTS).
 */
const REPO = path.resolve(import.meta.dirname, "../..");
const SCREENSHOTS = process.env["ANNAL_SCREENSHOTS"] ?? path.join(REPO, "docs/screenshots");

t.setTimeout(300_000);

const FAILING = `
import { defineWorkflow, NonRetryableError } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "sync-badge",
  version: 1,
  parameters: z.object({}),
  async run(flow) {
    return await flow.step("call the badge system", async () => {
      throw new NonRetryableError("the badge system refused the request", { code: "BADGE_REFUSED" });
    });
  },
});
`;

const LENA = "uid=lnovak,ou=finance,ou=people,dc=example,dc=org";
const MARTA = "uid=mtorres,ou=finance,ou=people,dc=example,dc=org";
const DAY = 86_400_000;

t.test(
  "in Chromium: sign in, a person a week ago and their history, an approval from the inbox as the cause of a membership, the live feed, a retried change event",
  { skip: withoutChromium },
  async (t) => {
    // The demo's workflows (access-request among them), and one that fails for failed work.
    const dir = path.join(REPO, ".tap/fixtures", `web-app-${process.pid}`);
    cpSync(path.join(REPO, "ops/demo/workflows"), dir, { recursive: true });
    writeDefinition(dir, "sync-badge.ts", FAILING);
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

[hooks]
dir = "${REPO}/ops/demo/hooks"
`,
    });

    // A person annal has known for ten days: promoted three days ago.
    const history = new EntryHistory(app.db.pool, app.store);
    const lena = await history.add(
      {
        dn: LENA,
        type: "user",
        attributes: {
          objectClass: ["inetOrgPerson"],
          uid: ["lnovak"],
          cn: ["Lena Novak"],
          sn: ["Novak"],
          givenName: ["Lena"],
          title: ["Analyst"],
          mail: ["lena.novak@example.org"],
          jpegPhoto: [flatColourJpeg([46, 125, 160]).toString("base64")],
        },
      },
      { at: new Date(Date.now() - 10 * DAY) },
    );
    await history.modify(
      lena,
      { title: ["Senior Analyst"], telephoneNumber: ["+44 20 7946 0123"] },
      { at: new Date(Date.now() - 3 * DAY), actor: PROSSI },
    );
    await history.settled();

    const context = await launchChromium(t, { viewport: { width: 1280, height: 860 } });
    const page = context.pages()[0] ?? (await context.newPage());
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page: ${error.message}`));
    page.on("console", (message) => {
      // Chromium asks every origin for /favicon.ico (the demo provider has none): not ours.
      const where = message.location().url;
      if (message.type() === "error" && !where.endsWith("/favicon.ico")) {
        problems.push(`console: ${message.text()} (${where})`);
      }
    });
    page.on("response", (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });
    const shot = (name: string, target: Page = page) =>
      target.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
    const ready = () => page.locator("main[data-ready]").waitFor();

    // Signed out, /app sends the browser to sign-in, and sign-in brings it back.
    await page.goto(`${app.url}/app/directory`);
    t.match(page.url(), /\/auth\/login\?returnTo=%2Fapp%2Fdirectory$/, "to sign-in first");
    await page.click("#sign-in-oidc");
    await page.locator("#provider-login").waitFor();
    await page.fill("#login", "prossi");
    await page.fill("#password", DEMO_PASSWORD);
    await page.click("#provider-login button[type=submit]");
    await page.waitForURL(`${app.url}/app/directory`);
    await ready();
    t.equal(await page.locator("#who").textContent(), "Priya Rossi");
    t.same(
      await page.locator("#nav a").allTextContents(),
      [
        "Directory",
        "Changes",
        "Inbox",
        "Delegations",
        "Reviews",
        "Start",
        "Instances",
        "Operations",
      ],
      "an operator and auditor sees every page",
    );

    // The directory opens on people, not on the first type by name (groups).
    t.equal(await page.inputValue("#search-type"), "users", "the directory opens on people");
    // annal's icon, as browsers ask for it.
    const icon = await fetch(`${app.url}/favicon.ico`);
    t.equal(icon.status, 200, "/favicon.ico answers");
    t.equal(icon.headers.get("content-type"), "image/x-icon");
    t.same([...new Uint8Array(await icon.arrayBuffer()).slice(0, 4)], [0, 0, 1, 0], "an ICO");

    // Find a person.
    await page.selectOption("#search-type", "users");
    await page.fill("#search-text", "Novak");
    await page.press("#search-text", "Enter");
    const result = page.locator("table.results a", { hasText: "Lena Novak" });
    await result.waitFor();
    await shot("1-directory-search");
    await result.click();
    await page.locator("#entry-name", { hasText: "Lena Novak" }).waitFor();
    await ready();
    t.equal(await page.locator("img.photo").getAttribute("alt"), "Photo of Lena Novak");
    t.match(await page.locator("table.attributes").textContent(), /Senior Analyst/);
    await shot("2-entry-now");

    // The person a week ago: before the promotion.
    await page.click("#at-week");
    await page.locator("#as-of", { hasText: "As it was at" }).waitFor();
    await ready();
    t.match(page.url(), /\?at=/);
    const then = await page.locator("table.attributes").textContent();
    t.match(then, /Analyst/);
    t.notMatch(then, /Senior Analyst/, "the title of a week ago");
    await shot("3-entry-a-week-ago");

    // Their history: the timeline, and the diff of the last two versions.
    await page.click("nav.tabs >> text=History");
    await page.locator("#timeline").waitFor();
    t.equal(await page.locator("#timeline > li.change").count(), 2);
    const diff = page.locator("#diff");
    t.match(
      await diff.locator("tr.changed", { hasText: "title" }).textContent(),
      /Analyst.*Senior Analyst/,
    );
    t.match(
      await diff.locator("tr.added", { hasText: "telephoneNumber" }).textContent(),
      /\+44 20 7946 0123/,
    );
    await shot("4-entry-history");

    // The demo's access request: Kateřina Rossi (Sales), signed in with the directory's form,
    // asks to join on-call; its owner Priya approves it from her inbox.
    const krossi = new Browserless();
    const signedIn = await krossi.request(`${app.url}/auth/login/ldap`, {
      method: "POST",
      body: form({ login: "krossi", password: DEMO_PASSWORD }),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url },
    });
    t.equal(signedIn.status, 303, "krossi signs in");
    const requester = {
      cookie: `service_session=${krossi.cookie(new URL(app.url).host, "service_session")}`,
    };
    const started = await app.graphql(
      `mutation($p: JSON!) { startWorkflow(name: "access-request", parameters: $p) { id } }`,
      requester,
      { p: { group: "on-call", reason: "I join the support rota in March" } },
    );
    t.notOk(started.body.errors, "the request is started");
    const instanceId: string = started.body.data.startWorkflow.id;
    const found = await fetch(
      `${app.url}/api/entries/users?filter=${encodeURIComponent("(uid=krossi)")}&fields=uid`,
      { headers: requester },
    );
    const kateřina: string = ((await found.json()) as { nodes: { entryUUID: string }[] }).nodes[0]!
      .entryUUID;

    await page.click("#nav >> text=Start");
    await page.locator("#catalog").waitFor();
    await page.click("#catalog >> text=Ask to join a group");
    await page.locator("#start-form").waitFor();
    t.equal(await page.locator("#start-form label").count(), 2, "a field for each parameter");
    await page.goBack();
    await page.locator("#catalog").waitFor();
    t.equal(
      await page
        .locator("#catalog li", { hasText: "Ask to join a group" })
        .locator(".description")
        .textContent(),
      "Asks for group and reason.",
      "a card says what the workflow asks for",
    );
    await page.click("#catalog >> text=Ask to join a group");
    await page.locator("#start-form").waitFor();
    await shot("5-workflow-start-form");

    await page.click("#nav >> text=Inbox");
    // Its first call is the step that finds the group; the dialog is the second.
    const card = page.locator(`#inbox li[data-dialog="${instanceId}.2"]`);
    await eventually(
      async () => {
        await page.reload();
        await ready();
        return (await card.count()) > 0 ? true : undefined;
      },
      { what: "the request in Priya's inbox" },
    );
    t.match(await card.textContent(), /support rota/);
    await shot("6-inbox");
    await card.getByLabel("Approve", { exact: true }).check();
    await card.getByLabel("Comment", { exact: true }).fill("welcome to the rota");
    await card.getByRole("button", { name: "Send answer" }).click();
    // The answered question leaves the inbox, and a line says so.
    await page.locator("#inbox-done", { hasText: "Answered" }).waitFor();
    t.equal(await card.count(), 0, "the answered card is gone");
    t.match(await page.locator("#inbox-done").textContent(), /the question is completed/);
    await shot("7-inbox-answered");

    await eventually(
      async () => {
        const answer = await app.graphql(
          `query($id: ID!) { instance(id: $id) { state } }`,
          requester,
          { id: instanceId },
        );
        return answer.body.data?.instance?.state === "COMPLETED" ? true : undefined;
      },
      { what: "the request to complete", timeout: 60_000 },
    );

    // The membership in Kateřina's history, with the approval as its cause.
    await eventually(
      async () => {
        // Until capture has the membership, her history has no change to show.
        await page.goto(`${app.url}/app/directory/users/${kateřina}/history`);
        await ready();
        return (await page.locator("#timeline li.membership").count()) > 0 ? true : undefined;
      },
      { what: "the membership in Kateřina's history", timeout: 60_000 },
    );
    const membership = page.locator("#timeline li.membership");
    // The group by its name, its DN on hover.
    const group = membership.locator(".what .person");
    await membership.locator(".what .person[data-named='1']").waitFor();
    t.equal(await group.textContent(), "on-call", "the group by name");
    t.equal(await group.getAttribute("title"), "cn=on-call,ou=groups,dc=example,dc=org");
    t.match(
      await membership.locator(".cause.workflow").textContent(),
      /workflow access-request, step “add the member”, approved by Priya Rossi/,
    );
    await shot("8-history-with-membership");

    // The instance behind it: its state, events and the change it made.
    await membership.locator(".cause a").click();
    await page.locator("#instance-state", { hasText: "COMPLETED" }).waitFor();
    // The result's decidedBy (an account name) is the person, by display name.
    await page
      .locator('dt[data-key="decidedBy"] + dd .person', { hasText: "Priya Rossi" })
      .waitFor();
    t.match(await page.locator("#instance-changes").textContent(), /member/);
    t.ok((await page.locator("#instance-events li").count()) >= 4, "the instance's events");
    await shot("9-instance");

    // The change feed, live: a change recorded while it is open shows up on top, its entry by
    // name.
    await page.click("#nav >> text=Changes");
    await page.locator("#feed").waitFor();
    await ready();
    await history.modify(lena, { title: ["Lead Analyst"] }, { actor: PROSSI });
    const fresh = page.locator("#feed li.new", { hasText: "Lena Novak" });
    await fresh.waitFor({ timeout: 30_000 });
    t.match(await fresh.textContent(), /title/);
    await shot("10-change-feed");

    // A page at a time: more changes than a page holds (of someone else than Lena, whose
    // history stays short for the phone's screenshot below).
    const marta = await history.add({
      dn: MARTA,
      type: "user",
      attributes: {
        objectClass: ["inetOrgPerson"],
        uid: ["mtorres"],
        cn: ["Marta Torres"],
        sn: ["Torres"],
      },
    });
    for (let i = 0; i < 30; i++) {
      await history.modify(marta, { telephoneNumber: [`+44 20 7946 ${1000 + i}`] });
    }
    await history.settled();
    await page.goto(`${app.url}/app/changes`);
    await ready();
    t.equal(await page.locator("#feed > li").count(), 25, "one page of changes");
    const older = page.locator("#feed-older");
    t.ok(await older.isVisible(), "and a button for older ones");
    const onePage = (await page.evaluate("document.documentElement.scrollHeight")) as number;
    t.ok(onePage < 3000, `the page is ${onePage} pixels tall`);
    await older.click();
    await eventually(
      async () => ((await page.locator("#feed > li").count()) > 25 ? true : undefined),
      { what: "the older changes below" },
    );
    // Entries by name, their DN on hover, as the members are.
    const entry = page.locator("#feed > li .what > a .person").first();
    await page.locator("#feed > li .what > a .person[data-named='1']").first().waitFor();
    t.equal(await entry.textContent(), "Marta Torres");
    t.equal(await entry.getAttribute("title"), MARTA);
    // Filtered by the server: only what the actor made, however far back.
    await page.goto(`${app.url}/app/changes?actor=prossi&entryType=users`);
    await ready();
    // People by name, their DN on hover.
    const whos = await page
      .locator("#feed li .who .person")
      .evaluateAll((people) => people.map((person) => person.getAttribute("title") ?? ""));
    t.ok(whos.length > 0, "prossi's changes of people");
    t.ok(
      whos.every((who) => who === PROSSI),
      "none by anyone else",
    );

    // Failed work: a change event for a person the directory does not know, retried.
    const body = JSON.stringify({
      id: "hr-ghost",
      kind: "employee.updated",
      at: new Date().toISOString(),
      employee: { uid: "nobody", title: "Ghost" },
    });
    const id = `msg_${process.pid}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const delivered = await fetch(`${app.url}/-hooks/hr/employees`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signDelivery("demo-hr-secret", id, timestamp, body),
      },
      body,
    });
    t.equal(delivered.status, 202, "the change event is taken in");
    const failing = await app.graphql(
      `mutation { startWorkflow(name: "sync-badge", parameters: {}) { id } }`,
      requester,
    );
    const erroredId: string = failing.body.data.startWorkflow.id;

    const row = page.locator("#failed-work tr", { hasText: "hr-ghost" });
    await eventually(
      async () => {
        await page.goto(`${app.url}/app/operations`);
        await ready();
        const instance = page.locator(`tr[data-instance="${erroredId}"]`);
        return (await row.count()) > 0 && (await instance.count()) > 0 ? true : undefined;
      },
      {
        what: "the failed change event and the errored instance on the operations page",
        timeout: 60_000,
      },
    );
    t.match(await row.textContent(), /nobody/);
    t.match(await page.locator(`tr[data-instance="${erroredId}"]`).textContent(), /BADGE_REFUSED/);
    t.ok((await page.locator("#projections tbody tr").count()) > 0, "the projections' lag");
    await shot("11-operations");
    await row.getByRole("button", { name: "Retry" }).click();
    const operator = await createToken(app.db.pool, app.store, {
      name: "ops",
      access: ["operator"],
    });
    await eventually(
      async () => {
        const response = await fetch(`${app.url}/api/failed-work?state=all`, {
          headers: { authorization: `Bearer ${operator.token}` },
        });
        const { items } = (await response.json()) as {
          items: { eventId: string; retries: number }[];
        };
        return items.find((item) => item.eventId === "hr-ghost" && item.retries >= 1);
      },
      { what: "the retry to be recorded" },
    );
    await page
      .locator(`tr[data-instance="${erroredId}"]`)
      .getByRole("button", { name: "Cancel" })
      .click();
    await eventually(
      async () => {
        const answer = await app.graphql(
          `query($id: ID!) { instance(id: $id) { state } }`,
          requester,
          { id: erroredId },
        );
        return answer.body.data?.instance?.state === "CANCELLED" ? true : undefined;
      },
      { what: "the errored instance to be cancelled" },
    );

    // At a phone's width the history still reads, one column.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${app.url}/app/directory/users/${lena}/history`);
    await page.locator("#timeline").waitFor();
    await shot("12-history-phone");

    t.same(problems, [], "no page errors and no 5xx along the way");
  },
);
