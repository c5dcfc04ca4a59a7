import { pino } from "pino";
import t from "tap";
import { createAuthentication, createToken } from "../../src/auth/index.ts";
import { captureOnce } from "../../src/capture/index.ts";
import { sampleLdif, seedDemoHistory } from "../../src/demo/index.ts";
import { loadDirectorySchema } from "../../src/directory/schema.ts";
import { graphqlPlugin } from "../../src/graphql/index.ts";
import { createServer } from "../../src/http/index.ts";
import { waitForProjection } from "../../src/projector/index.ts";
import { restPlugin } from "../../src/rest/index.ts";
import { webPlugin } from "../../src/web/index.ts";
import { allProjections } from "../../projections/index.ts";
import { testConfig } from "../rest/fixtures/harness.ts";
import { launchChromium, withoutChromium } from "../support/browser.ts";
import { captureFixture } from "../support/capture.ts";

/**
 * A write the log's state already holds when capture reaches its record: the demo's first
 * start reads the directory for its past, then again for the import, and a title changed
 * between the two reads (a person following the README at once) is in the import's snapshot
 * but not in the story. Capture applied the record to the snapshot, found nothing to change,
 * and recorded "modify title" with an empty patch: the History's "Compare two versions" of
 * the entry's add and that modify said "No attribute differs". The record's old values say
 * what the title was; the change now carries them.
 */
t.setTimeout(240_000);

const PRIYA = "uid=prossi,ou=engineering,ou=people,dc=example,dc=org";

t.test(
  "a title changed between the demo's past and its import: the modify's patch replaces the old title, and the History compares it",
  async (t) => {
    const fixture = await captureFixture(t, { seedLdif: sampleLdif() });
    let before: string | undefined;
    const context = {
      ...fixture.context,
      // The past read from the directory, then a write before the import reads it.
      beforeFirstImport: async (c: typeof fixture.context) => {
        const seeded = await seedDemoHistory(c);
        const entry = await fixture.directory.get(PRIYA, { attributes: ["title"] });
        before = String(entry?.attributes.title?.[0]);
        await fixture.directory.modify(PRIYA, [
          { operation: "replace", attribute: "title", values: ["Principal Engineer"] },
        ]);
        return seeded;
      },
    };
    await fixture.startProjector();
    await captureOnce(context, "accesslog"); // the past and the import
    await captureOnce(context, "accesslog"); // the accesslog from before the import
    const head = await fixture.store.head();
    for (const projection of allProjections) {
      await waitForProjection(fixture.db.pool, projection.name, head, 60_000);
    }
    t.ok(before && before !== "Principal Engineer", `the title before: ${before}`);

    // The REST channel, and the web application on it.
    const pool = fixture.db.pool;
    const config = testConfig();
    const log = pino({ level: "silent" });
    const schema = await loadDirectorySchema(fixture.directory);
    const authentication = createAuthentication({ pool });
    const server = createServer({ config, pool, projectorStatus: async () => [], log });
    await server.register(
      restPlugin({ pool, epoch: fixture.store.epoch, schema, config, log, authentication }),
    );
    await server.register(
      graphqlPlugin({ pool, authentication, directory: undefined, config, log }),
    );
    await server.register(webPlugin({ authentication }));
    const base = await server.listen({ host: "127.0.0.1", port: 0 });
    t.teardown(() => server.close());
    const { token } = await createToken(pool, fixture.store, { name: "held", access: ["read"] });
    const headers = { authorization: `Bearer ${token}` };
    const found = (await (
      await fetch(
        `${base}/api/entries/users?filter=${encodeURIComponent("(uid=prossi)")}&fields=uid`,
        { headers },
      )
    ).json()) as { nodes: { entryUUID: string }[] };
    const uuid = found.nodes[0]!.entryUUID;
    const changes = (await (
      await fetch(`${base}/api/entries/users/${uuid}/changes?include=nodes,patch`, { headers })
    ).json()) as { nodes: { type: string; attributes: string[]; patch: unknown[] }[] };
    const modify = changes.nodes.at(-1)!;
    t.equal(changes.nodes[0]!.type, "add", "the seeded past's add");
    t.equal(modify.type, "modify");
    t.same(modify.attributes, ["title"]);
    t.same(
      modify.patch,
      [{ op: "replace", path: "/title/0", value: "Principal Engineer" }],
      "the title the write replaced, not an empty patch",
    );
    const seededTitle = (changes.nodes[0]!.patch as { path: string; value: string[] }[]).find(
      (operation) => operation.path === "/title",
    )?.value;
    t.same(seededTitle, [before], "the past ends in the title before the write");

    if (withoutChromium) return;
    const browser = await launchChromium(t, {
      viewport: { width: 1280, height: 860 },
      extraHTTPHeaders: headers,
    });
    const page = await browser.newPage();
    await page.goto(`${base}/app/directory/users/${uuid}/history`);
    await page.locator("#diff").waitFor();
    await page.locator("#diff-from").focus(); // every version offered
    await page.selectOption("#diff-from", "0");
    await page.selectOption("#diff-to", String(changes.nodes.length - 1));
    await page.locator("#diff caption", { hasText: /^#1 add .* modify / }).waitFor();
    const rows = (await page.locator("#diff tbody tr").allInnerTexts()).map((row) =>
      row.split("\t").map((cell) => cell.trim()),
    );
    t.same(rows, [["title (changed)", before, "Principal Engineer"]], "the title, changed");
    t.match(
      await page.locator("#timeline > li.change").first().textContent(),
      /modify title/,
      "the timeline's modify title",
    );
  },
);
