import { AnnalError } from "../../errors/index.ts";

/** What GraphQL answered: `data` and, when the request went wrong in part, `errors`. */
export interface GraphqlAnswer {
  readonly data?: unknown;
  readonly errors?: readonly {
    readonly message: string;
    readonly extensions?: { readonly code?: string };
  }[];
}

/**
 * Runs one GraphQL request against annal at `url` (`POST /graphql`), with the session cookie
 * or bearer token in `headers`.
 *
 * @throws AnnalError `ANNAL_QUERY_FAILED` when annal cannot be reached, refuses the request
 *   (an HTTP status other than 200) or answers with errors: the message gives each error's
 *   code and message.
 */
export async function graphqlRequest(
  url: string,
  query: string,
  variables: Record<string, unknown> | undefined,
  headers: Record<string, string>,
): Promise<GraphqlAnswer> {
  let response: Response;
  try {
    response = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/graphql-response+json, application/json",
        ...headers,
      },
      body: JSON.stringify({ query, ...(variables === undefined ? {} : { variables }) }),
    });
  } catch (error) {
    throw new AnnalError(
      "ANNAL_QUERY_FAILED",
      `could not reach ${url}: ${(error as Error).message}`,
      {
        hint: "is annal running? annal status says; or pass --url",
        cause: error,
      },
    );
  }
  const text = await response.text();
  let answer: GraphqlAnswer;
  try {
    answer = JSON.parse(text) as GraphqlAnswer;
  } catch {
    throw new AnnalError(
      "ANNAL_QUERY_FAILED",
      `GraphQL answered ${response.status} with no JSON: ${text.slice(0, 200)}`,
    );
  }
  const errors = answer.errors ?? [];
  if (errors.length > 0 || response.status !== 200) {
    const said = errors.map((e) => `${e.extensions?.code ?? "ERROR"}: ${e.message}`).join("; ");
    throw new AnnalError(
      "ANNAL_QUERY_FAILED",
      `GraphQL answered ${response.status}${said === "" ? "" : ` with ${said}`}`,
      {
        hint: errors.some((e) => /AUTH|UNAUTHENTICATED|FORBIDDEN/.test(e.extensions?.code ?? ""))
          ? "sign in as someone who may: --as <login> (a demo person)"
          : undefined,
      },
    );
  }
  return answer;
}
