/**
 * Libraries choose their mode from `NODE_ENV` once, as they load: graphql-js, outside
 * production, checks every `instanceof` of its types a second way to catch two copies of
 * itself (2.6% of the server's CPU under GraphQL load: bench/RESULTS.md). annal runs as
 * production unless told otherwise: a `NODE_ENV` already set is kept, and `--dev` (the rules
 * file reloaded on change) leaves it unset. bin/annal.js calls this before annal's modules load.
 */
export function setNodeEnvFor(args: readonly string[], env: NodeJS.ProcessEnv = process.env): void {
  if (env.NODE_ENV !== undefined || args.includes("--dev")) return;
  env.NODE_ENV = "production";
}
