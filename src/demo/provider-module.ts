import type { Logger } from "../logger.ts";

/**
 * What oidc-provider prints, once, as it is first imported on a Node.js release that has no
 * LTS codename (`process.release.lts`): Node 26 until it enters LTS, and every build of the
 * `node` package annal pins. Bold red on a terminal, so matched past colour codes.
 */
const UNSUPPORTED_RUNTIME = /^(?:\x1b\[[0-9;]*m)?oidc-provider WARNING: Unsupported runtime\./;

/**
 * oidc-provider, imported for the demo's identity provider. The library checks the runtime as
 * its module is first evaluated (lib/index.js) and warns on standard error that Node.js 26 is
 * "unsupported" because that release carries no LTS name: not a fault of annal's runtime (the
 * demo provider's tests run on it), and the one alarming line of a normal start. So that one
 * warning, and only it, is taken out of the import's own `console.warn` and said in annal's log
 * at debug, with why; any other line the import prints passes as it is. Later imports are the
 * module cache's: the library prints nothing then.
 */
export async function importOidcProvider(
  log: Pick<Logger, "debug"> | undefined,
): Promise<typeof import("oidc-provider")> {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === "string" && UNSUPPORTED_RUNTIME.test(args[0])) {
      log?.debug(
        { node: process.version, lts: process.release.lts ?? null },
        "oidc-provider warns that this Node.js release is unsupported because it has no LTS name yet; the demo identity provider is tested on it",
      );
      return;
    }
    warn.apply(console, args);
  };
  try {
    return await import("oidc-provider");
  } finally {
    console.warn = warn;
  }
}
