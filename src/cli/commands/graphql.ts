/** `annal graphql '<query>'`: a GraphQL request against the running annal, as a demo person. */
import { AnnalError } from "../../errors/index.ts";
import type { CommandModule } from "../command.ts";
import type { Output } from "../output.ts";
import { GRAPHQL } from "../scenario-usages.ts";
import { signInAs } from "../scenarios/as-person.ts";
import { graphqlRequest } from "../scenarios/graphql-request.ts";
import { runningAnnal } from "../scenarios/running-annal.ts";
import { parseCommandLine } from "../usage.ts";

export const command: CommandModule = {
  run(args, output) {
    const { values, positionals } = parseCommandLine(args, GRAPHQL);
    return graphql({ query: positionals[0]!, ...values }, output);
  },
};

export interface GraphqlOptions {
  readonly query: string;
  /** The variables, as JSON text. */
  readonly variables?: string;
  readonly as?: string;
  readonly url?: string;
  readonly config?: string;
}

/**
 * Runs `query` against the running annal and prints its `data` as JSON. With `as`, signs in
 * as that demo person through the sign-in page first; without, sends `$ANNAL_TOKEN` as a
 * bearer token when it is set.
 *
 * @throws AnnalError `ANNAL_USAGE` for variables that are not a JSON object;
 *   `ANNAL_NOT_RUNNING`; `ANNAL_UNKNOWN_FIXTURE_ACCOUNT`; `ANNAL_LOGIN_FAILED`;
 *   `ANNAL_QUERY_FAILED`.
 */
export async function graphql(options: GraphqlOptions, output: Output): Promise<number> {
  const variables = options.variables === undefined ? undefined : parseVariables(options.variables);
  const annal = await runningAnnal(options);
  const token = process.env.ANNAL_TOKEN;
  const headers =
    options.as !== undefined
      ? await signInAs(annal.url, options.as)
      : token
        ? { authorization: `Bearer ${token}` }
        : {};
  const answer = await graphqlRequest(annal.url, options.query, variables, headers);
  output.out(JSON.stringify(answer.data, null, 2));
  return 0;
}

function parseVariables(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new AnnalError("ANNAL_USAGE", "--variables must be a JSON object", {
      hint: `e.g. --variables '{"id": "..."}'`,
    });
  }
  return parsed as Record<string, unknown>;
}
