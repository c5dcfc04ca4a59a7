import { mkdirSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { createToken } from "../../src/auth/index.ts";
import { createDirectoryClient } from "../../src/directory/index.ts";
import { ENTRIES } from "../../projections/entries/index.ts";
import { launchChromium, withoutChromium } from "../support/browser.ts";
import { DEMO_PASSWORD, OWOJCIK, PROSSI, startAccountsAnnal } from "../support/accounts.ts";
import { Browserless, form } from "../support/browserless.ts";
import { eventually } from "../support/eventually.ts";

/**
 * Access reviews in the web application, in Debian's Chromium: a group owner signs in, finds
 * the open campaign in the Inbox, sees each item with its membership's history (since when,
 * who or what made it, how long held, the last campaign's decision), has a keep without the
 * reason the review asks for refused on its row, keeps one with a reason, revokes two at once,
 * filters by person, group and overdue, and watches the campaign's progress move. Screenshots
 * go to docs/screenshots (or $ANNAL_SCREENSHOTS).
 */
const REPO = path.resolve(import.meta.dirname, "../..");
const SCREENSHOTS = process.env["ANNAL_SCREENSHOTS"] ?? path.join(REPO, "docs/screenshots");

t.setTimeout(300_000);

const GROUPS = "ou=groups,dc=example,dc=org";
const VAULT = `cn=vault,${GROUPS}`;
const BADGES = `cn=badge-admins,${GROUPS}`;
const person = (uid: string, given: string, sn: string) => ({
  uid,
  dn: `uid=${uid},ou=engineering,ou=people,dc=example,dc=org`,
  ldif: [
    `dn: uid=${uid},ou=engineering,ou=people,dc=example,dc=org`,
    "objectClass: inetOrgPerson",
    `uid: ${uid}`,
    `cn: ${given} ${sn}`,
    `sn: ${sn}`,
    `givenName: ${given}`,
    `displayName: ${given} ${sn}`,
    "",
  ].join("\n"),
});
const ASTRID = person("ahalvorsen", "Astrid", "Halvorsen");
const BOLA = person("bokafor", "Bola", "Okafor");
const CLARA = person("cmeyer", "Clara", "Meyer");

const SEED = [
  ASTRID.ldif,
  BOLA.ldif,
  CLARA.ldif,
  [
    `dn: ${VAULT}`,
    "objectClass: groupOfNames",
    "cn: vault",
    `owner: ${PROSSI}`,
    `member: ${OWOJCIK}`,
    `member: ${ASTRID.dn}`,
    `member: ${BOLA.dn}`,
    "",
  ].join("\n"),
  [
    `dn: ${BADGES}`,
    "objectClass: groupOfNames",
    "cn: badge-admins",
    `owner: ${PROSSI}`,
    `member: ${CLARA.dn}`,
    `member: ${OWOJCIK}`,
    "",
  ].join("\n"),
].join("\n");

t.test(
  "in Chromium: a reviewer decides their items with their history, one and two at once, and sees the progress move",
  { skip: withoutChromium },
  async (t) => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const app = await startAccountsAnnal(t, {
      captureInterval: "250ms",
      seedLdif: SEED,
      extraToml: `
[[directory.types]]
name = "group"
base = "${GROUPS}"
filter = "(objectClass=groupOfNames)"

[[reviews]]
name = "quarterly-groups"
title = "Quarterly review of group memberships"
scope = { groups = "(|(cn=vault)(cn=badge-admins))", base = "${GROUPS}" }
reviewers = { by = "owner" }
deadline = "10d"
reasonRequiredForKeep = true
`,
    });
    await eventually(async () => (await fetch(`${app.url}/readyz`)).ok, { what: "annal ready" });

    // A membership made later by a person, in the directory: its item names who made it.
    const directory = createDirectoryClient({
      url: app.slapd.url,
      bindDN: app.slapd.bindDN,
      password: app.slapd.password,
    });
    t.teardown(() => directory.close());
    await directory.modify(VAULT, [{ operation: "add", attribute: "member", values: CLARA.dn }], {
      as: PROSSI,
    });
    await eventually(
      async () =>
        (
          await app.db.pool.query(
            `SELECT 1 FROM ${ENTRIES} WHERE lower(dn) = lower($1) AND attributes -> 'member' ? $2`,
            [VAULT, CLARA.dn],
          )
        ).rowCount === 1,
      { what: "Clara's membership of the vault captured" },
    );

    // Last quarter's campaign: every membership kept by the owner, so this one's items say so.
    const { token } = await createToken(app.db.pool, app.store, {
      name: "admin",
      access: ["operator", "auditor"],
    });
    const admin = { authorization: `Bearer ${token}` };
    const signIn = new Browserless();
    const signedIn = await signIn.request(`${app.url}/auth/login/ldap`, {
      method: "POST",
      body: form({ login: "prossi", password: DEMO_PASSWORD }),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url },
    });
    t.equal(signedIn.status, 303, "prossi signed in over HTTP");
    const prossi = {
      cookie: `service_session=${signIn.cookie(new URL(app.url).host, "service_session")}`,
    };
    const start = async () => {
      const answer = await app.graphql(
        `mutation { startReview(review: "quarterly-groups") { id } }`,
        admin,
      );
      t.notOk(answer.body.errors, JSON.stringify(answer.body.errors));
      return answer.body.data.startReview.id as string;
    };
    const last = await start();
    // A campaign's items are instances of annal.review-item: each asks once it has started.
    const itemsOf = (id: string) =>
      eventually(
        async () => {
          const answer = await app.graphql(
            `query($id: ID!) { reviewCampaign(id: $id) { items(mine: true, state: open) { nodes { id } } } }`,
            prossi,
            { id },
          );
          const nodes = answer.body.data?.reviewCampaign?.items.nodes as { id: string }[];
          return nodes?.length === 6 ? nodes : undefined;
        },
        { what: "six open items" },
      );
    const lastItems = await itemsOf(last);
    const kept = await app.graphql(
      `mutation($id: ID!, $d: [ReviewDecisionInput!]!) { decideReviewItems(campaignId: $id, decisions: $d) { error { code } } }`,
      prossi,
      {
        id: last,
        d: lastItems.map((item) => ({ itemId: item.id, decision: "keep", reason: "on the team" })),
      },
    );
    t.same(
      kept.body.data.decideReviewItems.map((o: { error: unknown }) => o.error),
      Array(6).fill(null),
      "last quarter: all kept",
    );
    const now = await start();
    await itemsOf(now);

    const context = await launchChromium(t, { viewport: { width: 1280, height: 860 } });
    const page = context.pages()[0] ?? (await context.newPage());
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page: ${error.message}`));
    // From the top: the navigation bar is sticky, and would sit over the middle of the page.
    const shot = async (name: string) => {
      await page.evaluate("window.scrollTo(0, 0)");
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
    };
    const ready = () => page.locator("main[data-ready]").waitFor();

    await page.goto(`${app.url}/auth/login?returnTo=${encodeURIComponent("/app/inbox")}`);
    await page.fill("#login", "prossi");
    await page.fill("#password", DEMO_PASSWORD);
    await page.click("#ldap button[type=submit]");
    await page.waitForURL(`${app.url}/app/inbox`);
    await ready();
    t.ok((await page.locator("#nav a").allTextContents()).includes("Reviews"), "Reviews in nav");

    // The Inbox names the open campaign, not each of its items as a question.
    const waiting = page.locator(`#reviews-waiting li[data-campaign="${now}"]`);
    await waiting.waitFor();
    t.match(await waiting.textContent(), /6 memberships wait for your decision, due/);
    t.equal(
      await page.locator(`#reviews-waiting li[data-campaign="${last}"]`).count(),
      0,
      "a finished campaign waits for nobody",
    );
    t.equal(await page.locator("#inbox .card").count(), 0, "review items are no dialog cards");
    t.match(await page.locator("#inbox-empty").textContent(), /No other question waits/);
    await shot("18-inbox-reviews");

    await waiting.getByRole("link").click();
    await page.waitForURL(/\/app\/inbox\/reviews\?campaign=/);
    await ready();
    const items = page.locator("#review-items > li");
    t.equal(await items.count(), 6, "six open items");
    const item = (member: string, group: string) =>
      page
        .locator("#review-items > li", {
          has: page.locator(`.member [data-dn="${member}"]`),
        })
        .filter({ has: page.locator(`.group [data-dn="${group}"]`) });
    // Each with its history: since when, made by whom, held how long, last review's decision.
    const clara = item(CLARA.dn, VAULT);
    await clara.locator(".member .person[data-named='1']").waitFor();
    t.equal(await clara.locator(".member .person").textContent(), "Clara Meyer");
    const claraText = (await clara.textContent()) ?? "";
    t.match(claraText, /Member since/);
    t.match(claraText, /held 0 days/);
    t.match(claraText, /added in the directory by/);
    t.match(claraText, /Last review\s*kept by/);
    await clara.locator(".began .person[data-named='1']").waitFor();
    t.equal(await clara.locator(".began .person").textContent(), "Priya Rossi", "made by prossi");
    const astrid = item(ASTRID.dn, VAULT);
    t.match(await astrid.textContent(), /with the history’s first import/);
    await page.locator("#review-items .person[data-named]").last().waitFor();
    await shot("14-review-items");

    // A keep without the reason this review asks for: refused on its row, nothing lost.
    await astrid.getByRole("button", { name: "Keep", exact: true }).click();
    const refusal = astrid.locator(".result [role=alert]");
    await refusal.waitFor();
    t.match(await refusal.textContent(), /ANNAL_REVIEW_DECISION_INVALID/);
    t.match(await page.locator("#review-status").textContent(), /refused/);
    t.equal(await astrid.locator(".outcome").count(), 0, "still open");
    await shot("15-review-refused");

    // Kept with a reason.
    await astrid.getByLabel("Reason").fill("runs the vault audits");
    await astrid.getByRole("button", { name: "Keep", exact: true }).click();
    await astrid.locator(".outcome").waitFor();
    t.match(await astrid.locator(".outcome").textContent(), /Kept: runs the vault audits/);
    t.match(await page.locator("#review-status").textContent(), /Kept 1 item\./);

    // Two revoked at once: select, one reason, Revoke selected.
    const wojcikVault = item(OWOJCIK, VAULT);
    const bola = item(BOLA.dn, VAULT);
    await wojcikVault.locator("input.select").check();
    await bola.locator("input.select").check();
    t.equal(await page.locator("#r-selected").textContent(), "2 selected");
    t.equal(
      await astrid.locator("input.select").isDisabled(),
      true,
      "a decided item is not picked",
    );
    await page.fill("#r-bulk-reason", "moved to another team");
    await page.getByRole("button", { name: "Revoke selected" }).click();
    await bola.locator(".outcome").waitFor();
    await wojcikVault.locator(".outcome").waitFor();
    t.match(await bola.locator(".outcome").textContent(), /Revoked: moved to another team/);
    t.match(await page.locator("#review-status").textContent(), /Revoked 2 items\./);
    t.equal(await page.locator("#r-selected").textContent(), "none selected");
    // The revocations are directory writes capture brings back: the page follows them.
    for (const row of [bola, wojcikVault]) {
      const revocation = row.locator(".outcome .revocation", { hasText: "log position" });
      await revocation.waitFor({ timeout: 60_000 });
      t.match(await revocation.textContent(), /removal from the group: done · log position \d+/);
    }
    await shot("16-review-decided");
    const captured = await app.db.pool.query(
      `SELECT 1 FROM ${ENTRIES} WHERE lower(dn) = lower($1) AND attributes -> 'member' ? $2`,
      [VAULT, BOLA.dn],
    );
    t.equal(captured.rowCount, 0, "Bola is no longer in the vault");

    // Filters: a person, a group, overdue.
    await page.fill("#r-member", "cmeyer");
    await page.click(".review-filters button[type=submit]");
    await page.waitForURL(/member=cmeyer/);
    await ready();
    t.equal(await items.count(), 2, "Clara's two memberships");
    await page.selectOption("#r-group", BADGES);
    await page.click(".review-filters button[type=submit]");
    await page.waitForURL(/group=/);
    await ready();
    t.equal(await items.count(), 1, "Clara in badge-admins");
    await page.fill("#r-member", "");
    await page.selectOption("#r-group", "");
    await page.check("#r-overdue");
    await page.click(".review-filters button[type=submit]");
    await page.waitForURL(/overdue=1/);
    await ready();
    t.equal(await items.count(), 0, "nothing is overdue");
    t.match(await page.locator("#review-empty").textContent(), /None of your open items matches/);
    t.equal(await page.locator("#review-bulk").isHidden(), true, "no bulk bar over nothing");

    // The progress, from the navigation: both campaigns, then the open one's counters.
    await page.click("#nav a:text('Reviews')");
    await page.waitForURL(`${app.url}/app/reviews`);
    await ready();
    t.equal(await page.locator("#campaigns tbody tr").count(), 2);
    t.match(await page.locator(`#campaigns tr[data-campaign="${last}"]`).textContent(), /finished/);
    await page.locator(`#campaigns tr[data-campaign="${now}"] a`).click();
    await page.waitForURL(`${app.url}/app/reviews/${now}`);
    await ready();
    const counter = async (name: string) =>
      Number(await page.locator(`[data-counter="${name}"] .value`).textContent());
    t.equal(await counter("open"), 3);
    t.equal(await counter("decided"), 3);
    t.equal(await counter("revoked"), 2);
    t.equal(await counter("kept"), 1);
    t.equal(await counter("overdue"), 0);
    const reviewer = page.locator(`#by-reviewer tr[data-reviewer="${PROSSI}"]`);
    t.match(await reviewer.textContent(), /3\s*3\s*0/);
    await reviewer.locator(".person[data-named='1']").waitFor();
    await shot("17-review-progress");

    // On a phone: each item's decision under its history, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${app.url}/app/inbox/reviews?campaign=${now}`);
    await ready();
    t.equal(await items.count(), 3, "the three still open");
    await page.locator("#review-items .member .person[data-named='1']").first().waitFor();
    t.equal(
      await page.evaluate("document.documentElement.scrollWidth"),
      390,
      "no sideways scrolling",
    );
    await shot("19-review-phone");
    t.same(problems, []);
  },
);
