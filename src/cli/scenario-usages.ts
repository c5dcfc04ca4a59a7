/**
 * The usages of the commands that drive a running annal from the terminal, as a tutorial does:
 * `refresh`, `graphql`, `inventory`. Listed in `registry.ts` with the others.
 */
import { CONFIG_OPTION, usage } from "./command.ts";
import { SCENARIOS } from "../starter/index.ts";

export const REFRESH = usage({
  words: ["refresh"],
  synopsis:
    "<scenario> [--uid <login>] [--as <login>] [--timeout <duration>] [--url <url>] [--config <file>]",
  description: `send the demo's change event for a scenario to the running annal (the one started here,
or --url), signed as its webhook verifies, wait until it is processed (--timeout, default 60s) and
print what it started; --uid names the person (default per scenario), --as shows the instances
as that demo person sees them. Scenarios:
${SCENARIOS.map((s) => `  ${s.name}: ${s.description}`).join("\n")}`,
  options: {
    ...CONFIG_OPTION,
    uid: { type: "string" },
    as: { type: "string" },
    timeout: { type: "string" },
    url: { type: "string" },
  },
  positionals: { min: 1, max: 1, what: "the scenario: annal refresh <scenario>" },
});

export const GRAPHQL = usage({
  words: ["graphql"],
  synopsis: "'<query>' [--variables <json>] [--as <login>] [--url <url>] [--config <file>]",
  description: `run a GraphQL request against the running annal (the one started here, or --url) and
print its data as JSON; --as signs in as a demo person through the sign-in page first (their
password is demo) and asks as them, otherwise the bearer token in $ANNAL_TOKEN, if set, is sent`,
  options: {
    ...CONFIG_OPTION,
    variables: { type: "string" },
    as: { type: "string" },
    url: { type: "string" },
  },
  positionals: { min: 1, max: 1, what: "the GraphQL query: annal graphql '<query>'" },
});

export const INVENTORY = usage({
  words: ["inventory"],
  synopsis: "[<name>[@<version>]] [--json] [--config <file>]",
  description: `the stored workflow definitions and their bundle hashes: for each name the version new
instances start with, and the older ones that still run; with a name, the one bundle it runs
(ANNAL_INVENTORY_AMBIGUOUS when more than one version runs: name the version)`,
  options: { ...CONFIG_OPTION, json: { type: "boolean" } },
  positionals: { min: 0, max: 1, what: "" },
});
