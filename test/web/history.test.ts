import { pino } from "pino";
import type { Page } from "playwright-core";
import t from "tap";
import { launchChromium, withoutChromium } from "../support/browser.ts";
import { createAuthentication, createToken } from "../../src/auth/index.ts";
import { graphqlPlugin } from "../../src/graphql/index.ts";
import { createServer } from "../../src/http/index.ts";
import { restPlugin } from "../../src/rest/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { webPlugin } from "../../src/web/index.ts";
import { PEOPLE, TEST_SCHEMA, testConfig } from "../rest/fixtures/harness.ts";
import { EntryHistory } from "../support/entries.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * The history page of a long history in Debian's Chromium: its version pickers start with the
 * two newest versions and take the older ones after the first frame, and the versions behind
 * them are the patches applied in order; any two of them still compare right.
 */
/** More than the two pickers start with, and more than one frame's chunk (300) besides. */
const VERSIONS = 360;

t.setTimeout(180_000);

/** The title of version `i` (`#i+1`), and its telephone number: set every third change. */
const title = (i: number) => `v${i}`;
const phone = (i: number) => `+1 555 ${String(i - (i % 3)).padStart(4, "0")}`;

async function historyServer(t: { teardown(fn: () => unknown): void }) {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const history = await EntryHistory.start(t, pool, store);
  const start = Date.parse("2026-01-01T09:00:00Z");
  const uuid = await history.add(
    {
      dn: `uid=ada,${PEOPLE}`,
      type: "user",
      attributes: {
        objectClass: ["inetOrgPerson"],
        uid: ["ada"],
        cn: ["Ada Lovelace"],
        sn: ["Lovelace"],
        title: [title(0)],
      },
    },
    { at: new Date(start) },
  );
  for (let i = 1; i < VERSIONS; i++) {
    await history.modify(
      uuid,
      { title: [title(i)], ...(i % 3 === 0 ? { telephoneNumber: [phone(i)] } : {}) },
      { at: new Date(start + i * 60_000) },
    );
  }
  await history.settled();

  const config = testConfig();
  const log = pino({ level: "silent" });
  const authentication = createAuthentication({ pool });
  const server = createServer({ config, pool, projectorStatus: async () => [], log });
  await server.register(
    restPlugin({ pool, epoch: store.epoch, schema: TEST_SCHEMA, config, log, authentication }),
  );
  await server.register(graphqlPlugin({ pool, authentication, directory: undefined, config, log }));
  await server.register(webPlugin({ authentication }));
  const base = await server.listen({ host: "127.0.0.1", port: 0 });
  t.teardown(() => server.close());
  const { token } = await createToken(pool, store, { name: "history", access: ["read"] });
  return { url: `${base}/app/directory/users/${uuid}/history`, token };
}

/** The diff's rows: the attribute (and how it differs), its values before, its values after. */
async function diffRows(page: Page): Promise<string[][]> {
  const rows = await page.locator("#diff tbody tr").allInnerTexts();
  return rows.map((row) => row.split("\t").map((cell) => cell.trim()));
}

/**
 * Run in the page before its scripts: once the page holds the diff, and before any frame of it
 * is drawn, focus the first picker, and note how many versions each picker offers.
 */
const FOCUS_AT_ONCE = `
new MutationObserver((_, observer) => {
  const from = document.querySelector("#diff-from");
  const to = document.querySelector("#diff-to");
  if (!from || !to || !document.querySelector("#diff")) return;
  observer.disconnect();
  const before = from.options.length;
  from.focus();
  window.pickers = { before, from: from.options.length, to: to.options.length, selected: [from.value, to.value] };
}).observe(document, { childList: true, subtree: true });
`;

t.test(
  "the history of 360 versions: the pickers offer every version, and any two compare right",
  { skip: withoutChromium },
  async (t) => {
    const { url, token } = await historyServer(t);
    const context = await launchChromium(t, {
      viewport: { width: 1280, height: 860 },
      extraHTTPHeaders: { authorization: `Bearer ${token}` },
    });
    const problems: string[] = [];
    context.on("weberror", (error) => problems.push(error.error().message));

    // A person who reaches for a picker before the older versions are in it gets them all: the
    // page is looked at as soon as it holds the diff, before any frame of it is drawn.
    const early = await context.newPage();
    await early.addInitScript({ content: FOCUS_AT_ONCE });
    await early.goto(url);
    const pickers = await early.waitForFunction(
      () => (globalThis as { pickers?: unknown }).pickers,
    );
    t.same(
      await pickers.jsonValue(),
      {
        before: 2,
        from: VERSIONS,
        to: VERSIONS,
        selected: [String(VERSIONS - 2), String(VERSIONS - 1)],
      },
      "two versions offered with the first frame, every one once a picker has focus",
    );
    await early.close();

    const page = await context.newPage();
    await page.goto(url);
    // The last two versions at once.
    await page.locator("#diff").waitFor();
    t.match(
      await page.locator("#diff caption").textContent(),
      new RegExp(`^#${VERSIONS - 1} modify .* → #${VERSIONS} modify `),
    );
    t.same(await diffRows(page), [["title (changed)", title(VERSIONS - 2), title(VERSIONS - 1)]]);

    // Once the timeline is drawn, the pickers hold every version, oldest first.
    await page.locator("#timeline[data-complete]").waitFor({ state: "attached" });
    t.equal(await page.locator("#timeline > li.change").count(), VERSIONS);
    const labels = await page.locator("#diff-to option").allTextContents();
    t.equal(labels.length, VERSIONS);
    t.match(labels[0], /^#1 add /);
    t.match(labels.at(-1), new RegExp(`^#${VERSIONS} modify `));
    t.same(
      await page.evaluate(
        "[...document.querySelectorAll('#diff-from option')].map((o) => o.value)",
      ),
      Array.from({ length: VERSIONS }, (_, i) => String(i)),
    );

    // Two old versions: #3 (title v2, no telephone number yet) and #8.
    await page.selectOption("#diff-from", "2");
    await page.selectOption("#diff-to", "7");
    await page.locator("#diff caption", { hasText: /^#3 modify .* → #8 modify / }).waitFor();
    t.same(await diffRows(page), [
      ["telephoneNumber (added)", "", phone(7)],
      ["title (changed)", title(2), title(7)],
    ]);

    // Every attribute, the same ones too.
    await page.uncheck("#diff-only");
    t.same(await diffRows(page), [
      ["cn", "Ada Lovelace", "Ada Lovelace"],
      ["objectClass", "inetOrgPerson", "inetOrgPerson"],
      ["sn", "Lovelace", "Lovelace"],
      ["telephoneNumber (added)", "", phone(7)],
      ["title (changed)", title(2), title(7)],
      ["uid", "ada", "ada"],
    ]);
    await page.check("#diff-only");

    // An old change of the timeline, compared with the version before it: #5 with #4.
    const fifth = page.locator("#timeline > li.change").nth(VERSIONS - 5);
    await fifth.locator("button", { hasText: "Compare with the version before" }).click();
    await page.locator("#diff caption", { hasText: /^#4 modify .* → #5 modify / }).waitFor();
    t.same(await diffRows(page), [["title (changed)", title(3), title(4)]]);
    t.same([await page.inputValue("#diff-from"), await page.inputValue("#diff-to")], ["3", "4"]);

    t.same(problems, [], "no page errors");
  },
);
