/**
 * `npm run bench -- web`: the web application's entry history page (`/app/directory/users/<id>
 * /history`) for an entry with 1,000 versions, opened in Debian's Chromium through
 * playwright-core, from navigation to a frame with the diff and the newest changes drawn. The
 * baseline, in the same run against the same server, is the one REST request the page's data
 * comes from (`/api/entries/users/<id>/changes?include=nodes,patch&first=1000`) fetched by Node.
 * The target is under 500 ms.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { pino } from "pino";
import { chromium } from "playwright-core";
import { createAuthentication, createToken } from "../src/auth/index.ts";
import { parseConfig } from "../src/config/index.ts";
import { parseSubschema } from "../src/directory/schema.ts";
import { graphqlPlugin } from "../src/graphql/index.ts";
import { createServer } from "../src/http/index.ts";
import { Projector } from "../src/projector/index.ts";
import { restPlugin } from "../src/rest/index.ts";
import { EventStore } from "../src/store/index.ts";
import { webPlugin } from "../src/web/index.ts";
import { CHROMIUM, CHROMIUM_ARGS } from "../test/support/browser.ts";
import { EntryHistory } from "../test/support/entries.ts";
import { allProjections } from "../projections/index.ts";
import { benchDatabase, fmt, machine, percentile, recordResults, time } from "./support.ts";

const VERSIONS = 1_000;
const RUNS = 30;
const WARMUP = 3;
const PEOPLE = "ou=people,dc=example,dc=org";
const STRING = "1.3.6.1.4.1.1466.115.121.1.15";

const schema = parseSubschema([
  "( 2.5.4.0 NAME 'objectClass' SYNTAX 1.3.6.1.4.1.1466.115.121.1.38 )",
  ...["cn", "sn", "givenName", "title", "description", "uid", "telephoneNumber", "mail"].map(
    (name, i) => `( 9.9.9.${i} NAME '${name}' SYNTAX ${STRING} )`,
  ),
  "( 2.5.18.2 NAME 'modifyTimestamp' SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 SINGLE-VALUE NO-USER-MODIFICATION USAGE directoryOperation )",
  "( 1.3.6.1.1.16.4 NAME 'entryUUID' SYNTAX 1.3.6.1.1.16.1 SINGLE-VALUE NO-USER-MODIFICATION USAGE directoryOperation )",
]);

/**
 * Run in the page: resolves once every selector matches an element on screen (rendered, with
 * a box) and a frame has drawn it. Checked before each frame (`requestAnimationFrame`), and
 * answered in a task after that frame's style, layout and paint. Playwright's own waiting
 * (`locator.waitFor`) asks again after 0, 20, 50, 100 and 100 ms and then every 500 ms: a page
 * usable 10 ms after its fifth look was measured 490 ms late, which made the figures bimodal.
 * Only standalone code can be sent to the page, and Node's types know no DOM: `page` is typed
 * here with what is used of it.
 */
function drawn(selectors: readonly string[]): Promise<void> {
  const page = globalThis as unknown as {
    document: {
      querySelector(selector: string): {
        checkVisibility(): boolean;
        getBoundingClientRect(): { width: number; height: number };
      } | null;
    };
    requestAnimationFrame(callback: () => void): void;
    setTimeout(callback: () => void, ms: number): void;
  };
  const shown = (selector: string) => {
    const element = page.document.querySelector(selector);
    const box = element?.getBoundingClientRect();
    return !!element && element.checkVisibility() && !!box && box.width > 0 && box.height > 0;
  };
  return new Promise((resolve) => {
    const look = () => {
      if (selectors.every(shown)) page.setTimeout(resolve, 0);
      else page.requestAnimationFrame(look);
    };
    page.requestAnimationFrame(look);
  });
}

export async function webBenchmark(): Promise<void> {
  const db = await benchDatabase();
  const { pool } = db;
  const log = pino({ level: "silent" });
  const config = parseConfig(
    `[directory]\nurl = "ldap://127.0.0.1:1"\nbindDN = "cn=admin,dc=example,dc=org"\npassword = "\${P}"\nbase = "dc=example,dc=org"\n[[directory.types]]\nname = "user"\nbase = "${PEOPLE}"\n`,
    { path: "bench.toml", env: { P: "x" } },
  );
  const projector = await Projector.start({
    pool,
    projections: allProjections,
    log,
    pollInterval: 50,
  });
  const server = createServer({ config, pool, projectorStatus: () => projector.status(), log });
  const profile = await mkdtemp(path.join(tmpdir(), "annal-bench-chromium-"));
  try {
    const store = await EventStore.open(pool);
    const authentication = createAuthentication({ pool });
    await server.register(
      restPlugin({ pool, epoch: store.epoch, schema, config, log, authentication }),
    );
    await server.register(
      graphqlPlugin({ pool, authentication, directory: undefined, config, log }),
    );
    await server.register(webPlugin({ authentication }));
    const base = await server.listen({ host: "127.0.0.1", port: 0 });
    const { token } = await createToken(pool, store, { name: "bench", access: ["read"] });
    const authorization = `Bearer ${token}`;

    process.stderr.write(`bench: web: writing ${fmt(VERSIONS)} versions of one entry\n`);
    const history = new EntryHistory(pool, store);
    const start = Date.now() - VERSIONS * 60_000;
    const uuid = await history.add(
      {
        dn: `uid=ada,${PEOPLE}`,
        type: "user",
        attributes: {
          objectClass: ["inetOrgPerson"],
          uid: ["ada"],
          cn: ["Ada Lovelace"],
          sn: ["Lovelace"],
          title: ["v0"],
        },
      },
      { at: new Date(start) },
    );
    for (let i = 1; i < VERSIONS; i++) {
      await history.modify(
        uuid,
        {
          title: [`v${i}`],
          ...(i % 3 === 0 ? { telephoneNumber: [`+1 555 ${String(i).padStart(4, "0")}`] } : {}),
        },
        { at: new Date(start + i * 60_000) },
      );
    }
    await history.settled();

    const api = `${base}/api/entries/users/${uuid}/changes?include=nodes,patch,pageInfo&first=1000`;
    const fetchOnce = async () => {
      const response = await fetch(api, { headers: { authorization } });
      const body = (await response.json()) as { nodes: unknown[] };
      if (body.nodes.length !== VERSIONS)
        throw new Error(`expected ${VERSIONS} changes, got ${body.nodes.length}`);
    };

    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 900 },
      // The page's own requests carry the token, as a signed-in browser's carry the cookie.
      extraHTTPHeaders: { authorization },
      args: [...CHROMIUM_ARGS],
    });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      const url = `${base}/app/directory/users/${uuid}/history`;
      const openOnce = async () => {
        await page.goto(`${base}/app/inbox`); // leave the page, so each run opens it afresh
        await page.goto(url);
        await page.locator(`#timeline > li:nth-child(${VERSIONS})`).waitFor({ state: "attached" });
        await page.locator("#diff").waitFor();
      };
      for (let i = 0; i < WARMUP; i++) {
        await openOnce();
        await fetchOnce();
      }
      if (process.env["ANNAL_BENCH_TRACE"]) {
        // Where one opening's time goes: each request's start and end since navigation.
        const t0 = Date.now();
        const lines: string[] = [];
        const listener = (request: import("playwright-core").Request) =>
          lines.push(
            `${Date.now() - t0} ms ${request.method()} ${request.url().replace(base, "")}`,
          );
        await page.goto(`${base}/app/inbox`);
        await page.locator("main[data-ready]").waitFor();
        page.on("requestfinished", listener);
        await page.goto(url);
        await page.locator(`#timeline > li:nth-child(${VERSIONS})`).waitFor({ state: "attached" });
        lines.push(`${Date.now() - t0} ms drawn`);
        page.off("requestfinished", listener);
        // The browser's own account: navigation, each resource, annal's marks.
        const entries = await page.evaluate(() =>
          performance
            .getEntries()
            // Typed by Node's lib here, whose entry types are not the browser's.
            .filter((e) => String(e.entryType) !== "paint" || e.name === "first-contentful-paint")
            .map((e) => {
              const timing = e as PerformanceResourceTiming;
              const frame = e as PerformanceEntry & {
                renderStart?: number;
                styleAndLayoutStart?: number;
                scripts?: { duration: number; sourceFunctionName: string; invoker: string }[];
              };
              if (String(frame.entryType) === "long-animation-frame")
                return `${e.startTime.toFixed(0)} +${e.duration.toFixed(0)} ms frame: render ${frame.renderStart?.toFixed(0)}, style and layout ${frame.styleAndLayoutStart?.toFixed(0)}, scripts ${(frame.scripts ?? []).map((x) => `${x.invoker} ${x.duration.toFixed(0)} ms`).join("; ")}`;
              const parts =
                "responseEnd" in timing
                  ? ` (request ${timing.requestStart.toFixed(0)}, first byte ${timing.responseStart.toFixed(0)}, end ${timing.responseEnd.toFixed(0)})`
                  : "";
              return `${e.startTime.toFixed(0)} +${e.duration.toFixed(0)} ms ${e.entryType} ${e.name}${parts}`;
            }),
        );
        lines.push("in the browser, since navigation:", ...entries);
        process.stderr.write(`${lines.join("\n")}\n`);
      }
      const usableMs: number[] = [];
      const completeMs: number[] = [];
      const apiMs: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        await page.goto(`${base}/app/inbox`);
        await page.locator("main[data-ready]").waitFor();
        const begin = process.hrtime.bigint();
        const since = () => Number(process.hrtime.bigint() - begin) / 1e6;
        // Commit, not load: from then on the page is watched a frame at a time (see `drawn`).
        await page.goto(url, { waitUntil: "commit" });
        await page.evaluate(drawn, ["#diff", "#timeline > li"]);
        usableMs.push(since());
        await page.evaluate(drawn, ["#timeline[data-complete]"]);
        completeMs.push(since());
        apiMs.push((await time(fetchOnce)) * 1000);
      }
      for (const list of [usableMs, completeMs, apiMs]) list.sort((a, b) => a - b);
      const p50 = percentile(usableMs, 50);
      const p95 = percentile(usableMs, 95);
      const api50 = percentile(apiMs, 50);
      const row = (what: string, list: number[]) =>
        `| ${what} | ${fmt(percentile(list, 50), 1)} | ${fmt(percentile(list, 95), 1)} | ${fmt(percentile(list, 50) / api50, 2)} |`;
      recordResults(
        "web",
        `## The web application

Command: \`npm run bench -- web\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}; Debian's Chromium, headless, driven by playwright-core.

The entry history page of an entry with ${fmt(VERSIONS)} versions, opened in the browser (the
shell, the bundle, the viewer over GraphQL, the ${fmt(VERSIONS)} changes with their patches, every
version rebuilt from the patches): from navigation until it is usable (a frame has drawn the
diff of the last two versions and the newest 30 changes of the timeline), and until the timeline
holds all ${fmt(VERSIONS)} (the older changes, then the older versions in the two pickers, are
added a chunk per frame after the first frame; the browser lays out only the changes on screen,
\`content-visibility: auto\`). The page is watched a frame at a time from inside it (the
previous runs used playwright's \`locator.waitFor\`, whose looks come 500 ms apart after the
first five and measured a page usable just after one as if it took up to 500 ms more).
${RUNS} runs after ${WARMUP} to warm up.
The target is under 500 ms. Load average when it ran: ${os
          .loadavg()
          .map((n) => n.toFixed(1))
          .join(", ")} (2 cores).

| measure (ms) | p50 | p95 | ratio (p50) |
| --- | ---: | ---: | ---: |
${row("history page usable in Chromium", usableMs)}
${row(`history page with all ${fmt(VERSIONS)} changes drawn`, completeMs)}
${row("baseline: its one REST request, fetched by Node", apiMs)}

Usable under 500 ms at p95: ${p95 < 500 ? "yes" : "no"}.`,
      );
      process.stderr.write(
        `bench: web: history page p50 ${fmt(p50, 1)} ms, p95 ${fmt(p95, 1)} ms\n`,
      );
    } finally {
      await context.close();
    }
  } finally {
    await server.close();
    await projector.stop();
    await db.close();
    await rm(profile, { recursive: true, force: true });
  }
}
