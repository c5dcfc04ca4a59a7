import { context, type BuildResult, type Plugin } from "esbuild";
import type { Logger } from "../logger.ts";
import { bundleFailure, importRules, rulesBuildOptions, type RulesModule } from "./load.ts";

/** A rules file watched in development. */
export interface RulesWatcher {
  stop(): Promise<void>;
}

/**
 * Watches the rules file and every file it imports (esbuild's watch mode, which follows the
 * imports as they change) and calls `onLoad` with each new build that loads. A build that
 * fails, or an `onLoad` that throws (a factory that throws, a route that takes annal's path),
 * is logged with its code and the file and line; what was served before stays served.
 * The first build is awaited: its failure is logged too, and nothing is served until a
 * change fixes it.
 */
export async function watchRules(
  file: string,
  onLoad: (rules: RulesModule) => Promise<void>,
  log: Logger,
): Promise<RulesWatcher> {
  let last: string | undefined;
  // One reload at a time, in the order esbuild finished its builds.
  let chain: Promise<void> = Promise.resolve();
  const reload = async (result: BuildResult) => {
    if (result.errors.length > 0) {
      const failure = bundleFailure(file, { errors: result.errors });
      log.error(
        { code: failure.code, ...failure.details },
        `rules not reloaded: ${failure.message}`,
      );
      return;
    }
    const code = result.outputFiles?.[0]?.text ?? "";
    if (code === last) return;
    try {
      const rules = await importRules(file, result);
      await onLoad(rules);
      last = code;
      log.info({ file, inputs: rules.inputs.length }, "rules loaded");
    } catch (error) {
      const {
        code: errorCode,
        message,
        details,
      } = error as {
        code?: string;
        message?: string;
        details?: Record<string, unknown>;
      };
      log.error({ code: errorCode, ...details, err: error }, `rules not reloaded: ${message}`);
    }
  };
  const onEnd: Plugin = {
    name: "annal-rules-reload",
    setup(build) {
      build.onEnd((result) => {
        chain = chain.then(() => reload(result));
        return chain;
      });
    },
  };
  const ctx = await context({ ...rulesBuildOptions(file), plugins: [onEnd] });
  // The first build before watching: start-up waits for it (a failure is logged by onEnd).
  await ctx.rebuild().catch(() => {});
  await chain;
  await ctx.watch();
  return {
    async stop() {
      await ctx.dispose();
      await chain;
    },
  };
}
