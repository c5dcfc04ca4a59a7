import type { FastifyReply } from "fastify";
import type { Logger } from "../logger.ts";
import { UnknownAttributesError } from "./errors.ts";
import type { Handling } from "./prefer.ts";

/** Names the query parameters a route does not take, ignored under lenient handling. */
export const IGNORED_PARAMETERS_HEADER = "annal-ignored-parameters";

/**
 * Names the attributes no entry type has, ignored under lenient handling: in `filter` they
 * match nothing (so an empty page is not "nobody has that title"), in `fields` and `sort`
 * they select nothing, in `affects` no change touched them.
 */
export const UNKNOWN_ATTRIBUTES_HEADER = "annal-unknown-attributes";

/**
 * A header value listing `names`: each percent-encoded as in a URL (a name came from the
 * request and may hold any character, which a header cannot), comma-separated.
 */
function headerList(names: readonly string[]): string {
  return [...new Set(names)].map((name) => encodeURIComponent(name)).join(", ");
}

/**
 * Lenient handling ignores a query parameter the route does not take, but never without a
 * trace: the answer names it (`Annal-Ignored-Parameters: filtr`) and the log says so at
 * debug. Strict handling refused it before (`QueryParameters`).
 */
export function reportIgnoredParameters(
  reply: FastifyReply,
  log: Logger,
  ignored: readonly string[],
): void {
  if (ignored.length === 0) return;
  reply.header(IGNORED_PARAMETERS_HEADER, headerList(ignored));
  log.debug(
    { url: reply.request.url.split("?")[0], ignoredParameters: ignored },
    "ignored query parameters the route does not take (lenient handling)",
  );
}

/**
 * Attribute names no entry type has, by the parameter that named them: strict handling
 * refuses them (`ANNAL_ATTRIBUTES_UNKNOWN`, listing them); lenient handling answers as if
 * they held no value and names them in `Annal-Unknown-Attributes`, and in the log at debug.
 */
export function refuseOrReportUnknown(
  handling: Handling,
  byParameter: Readonly<Record<string, readonly string[]>>,
  reply: FastifyReply,
  log: Logger,
): void {
  const given = Object.fromEntries(Object.entries(byParameter).filter(([, n]) => n.length > 0));
  if (Object.keys(given).length === 0) return;
  if (handling === "strict") throw new UnknownAttributesError(given);
  const unknown = Object.values(given).flat();
  const previous = reply.getHeader(UNKNOWN_ATTRIBUTES_HEADER);
  reply.header(
    UNKNOWN_ATTRIBUTES_HEADER,
    typeof previous === "string" && previous !== ""
      ? `${previous}, ${headerList(unknown)}`
      : headerList(unknown),
  );
  log.debug(
    { url: reply.request.url.split("?")[0], unknownAttributes: given },
    "attribute names no entry type has match nothing (lenient handling)",
  );
}
