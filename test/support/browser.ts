import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/** Debian's Chromium (`apt-get install chromium`), or `CHROMIUM_PATH`. */
export const CHROMIUM = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium";

/** The flags every headless Chromium of the tests and benchmarks runs with. */
export const CHROMIUM_ARGS: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** tap's `skip` for a browser test: false with Chromium installed, else why it is skipped. */
export const withoutChromium: false | string = existsSync(CHROMIUM)
  ? false
  : `no Chromium at ${CHROMIUM} (apt-get install chromium)`;

/**
 * Headless Chromium with a fresh profile of its own, closed and removed when the test ends.
 *
 * @example
 * const context = await launchChromium(t, { viewport: { width: 1280, height: 860 } });
 * const page = context.pages()[0] ?? (await context.newPage());
 */
export async function launchChromium(
  t: { teardown(fn: () => unknown): void },
  options: Pick<
    Parameters<typeof chromium.launchPersistentContext>[1] & object,
    "viewport" | "extraHTTPHeaders"
  > = {},
): Promise<BrowserContext> {
  const profile = await mkdtemp(path.join(tmpdir(), "annal-chromium-"));
  t.teardown(() => rm(profile, { recursive: true, force: true }));
  const context = await chromium.launchPersistentContext(profile, {
    ...options,
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_ARGS],
  });
  t.teardown(() => context.close());
  return context;
}
