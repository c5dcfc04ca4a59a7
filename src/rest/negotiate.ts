import type { FastifyRequest } from "fastify";
import Negotiator from "negotiator";
import { RestError } from "./errors.ts";
import { formatOf } from "./export/formats.ts";

/** The route that exports with `filename`: its answer's type is the format's. */
const SEARCH_ROUTE = "/api/entries/:type";

/**
 * The media type a data route answers in: JSON, or in export mode the format `filename`
 * names. Undefined when `filename` is not one the route can read: the route refuses it with
 * its own 400, which says more than a 406 would.
 */
function answerType(request: FastifyRequest): string | undefined {
  const filename = (request.query as Record<string, unknown> | undefined)?.filename;
  if (request.routeOptions.url !== SEARCH_ROUTE || filename === undefined || filename === "") {
    return "application/json";
  }
  if (typeof filename !== "string") return undefined;
  try {
    const format = formatOf(filename);
    return format.contentType(format.options.parse({})).split(";")[0];
  } catch {
    return undefined;
  }
}

/**
 * Refuses a data request whose `Accept` allows nothing the route answers in: 406
 * `ANNAL_NOT_ACCEPTABLE`, as `/api` does, where the route would otherwise answer JSON that
 * the client said it cannot take. No `Accept` (or an empty one) accepts anything.
 */
export async function requireAcceptable(request: FastifyRequest): Promise<void> {
  if ((request.headers.accept ?? "").trim() === "") return;
  const type = answerType(request);
  if (type === undefined || new Negotiator(request).mediaType([type]) !== undefined) return;
  throw new RestError("ANNAL_NOT_ACCEPTABLE", `this route answers in ${type} only`, {
    status: 406,
    hint: `send Accept: ${type} (or */*), or no Accept header`,
    details: { expected: type },
  });
}
