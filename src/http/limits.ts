import type { Socket } from "node:net";
import type { ConnectionError, FastifyInstance } from "fastify";
import { AnnalError, classifyError, PROBLEM_CONTENT_TYPE, problemOf } from "../errors/index.ts";
import type { Logger } from "../logger.ts";

/** The longest URL (path and query string) annal reads, in characters: longer is 414. */
export const MAX_URL_LENGTH = 16_384;

/**
 * Node's limit on the request line and header fields together (its default is 16 KiB): room
 * for a URL of `MAX_URL_LENGTH` and ordinary headers, so that such a URL reaches the hook
 * below and gets its 414 with a problem body, not the parser's bare refusal.
 */
export const MAX_HEADER_SIZE = MAX_URL_LENGTH + 16_384;

function uriTooLong(): AnnalError {
  return new AnnalError(
    "ANNAL_URI_TOO_LONG",
    `the URL is longer than annal accepts (${MAX_URL_LENGTH} characters)`,
  );
}

/** Refuses a URL over `MAX_URL_LENGTH` before routing, authentication or any route's work. */
export function limitUrlLength(server: FastifyInstance): void {
  server.addHook("onRequest", async (request) => {
    if (request.url.length > MAX_URL_LENGTH) throw uriTooLong();
  });
}

/**
 * For Fastify's `clientErrorHandler`: what Node's HTTP parser refuses before there is a
 * request (a request line and headers over `MAX_HEADER_SIZE`, a malformed request, a request
 * that took too long to arrive) answered as problem+json like every other error, where
 * Fastify's default writes a bare JSON body of its own.
 */
export function clientErrorHandler(log: Logger) {
  return (error: ConnectionError, socket: Socket): void => {
    // A reset connection has nobody to answer.
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const refusal =
      error.code === "HPE_HEADER_OVERFLOW"
        ? // Fastify types it as a serialised Buffer; Node passes the Buffer itself.
          overflowRefusal(error.rawPacket as unknown as Buffer | undefined)
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? new AnnalError("ANNAL_REQUEST_TIMEOUT", "the request took too long to arrive")
          : new AnnalError("ANNAL_BAD_REQUEST", "the request is not valid HTTP");
    const classified = classifyError(refusal, "");
    log.debug({ code: classified.code, parser: error.code }, classified.message);
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const problem = problemOf(classified);
    const body = JSON.stringify(problem);
    // `end`, as Node's documentation does: the answer is flushed before the socket closes.
    socket.end(
      `HTTP/1.1 ${classified.status} ${problem.title}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        "Connection: close\r\n\r\n" +
        body,
    );
  };
}

/**
 * The parser names no part when the request line and headers overflow: the bytes it was
 * reading tell. A first line (up to the first CRLF, or none yet) longer than the URL limit
 * is the request line: 414; otherwise the header fields are too large: 431.
 */
function overflowRefusal(raw: Buffer | undefined): AnnalError {
  const end = raw?.indexOf("\r\n") ?? -1;
  if (raw === undefined || end === -1 || end > MAX_URL_LENGTH) return uriTooLong();
  return new AnnalError(
    "ANNAL_HEADERS_TOO_LARGE",
    `the request line and header fields are larger than annal accepts (${MAX_HEADER_SIZE} bytes)`,
  );
}
