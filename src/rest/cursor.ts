import { databaseIdentity } from "../store/index.ts";
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { Queryable } from "../db/index.ts";
import { ForeignCursorError, InvalidCursorError } from "../store/index.ts";
import { RestError } from "./errors.ts";

const MAX_CURSOR_LENGTH = 4096;
const MAC_BYTES = 16;

interface Payload {
  /** The database epoch (as in the event store's cursors). */
  readonly e: string;
  /** What the cursor pages through: `search` or `changes`. */
  readonly k: string;
  /** Digest of the query it belongs to (type, filter, sort). */
  readonly q: string;
  /** The position: the last (or first) row's keys. */
  readonly p: unknown;
}

/** A cursor of this database that belongs to another query (other type, filter or sort). */
export class CursorMismatchError extends RestError {
  constructor(parameter: string) {
    super(
      "ANNAL_CURSOR_MISMATCH",
      `${parameter}: the cursor belongs to another query (another type, filter or sort order)`,
      {
        hint: "page with the same filter and sort the cursor came from, or start again without a cursor",
        details: { parameter },
      },
    );
  }
}

/**
 * The REST channel's opaque cursors: `base64url(JSON payload).base64url(HMAC)`. The payload
 * names the database epoch (as the event store's cursors do), what it pages and the query it
 * belongs to; the MAC, keyed by a secret only this database holds, makes any change to it a
 * 400 instead of a silently different page. A cursor of another database fails the MAC and
 * shows a foreign epoch: `ANNAL_CURSOR_FOREIGN`; anything else unreadable is
 * `ANNAL_CURSOR_INVALID`.
 */
export class CursorCodec {
  readonly #epoch: string;
  readonly #key: Buffer;

  constructor(epoch: string, key: Buffer) {
    this.#epoch = epoch;
    this.#key = key;
  }

  encode(kind: string, query: string, position: unknown): string {
    const payload: Payload = { e: this.#epoch, k: kind, q: query, p: position };
    const body = Buffer.from(JSON.stringify(payload), "utf8");
    return `${body.toString("base64url")}.${this.#mac(body).toString("base64url")}`;
  }

  /** The position in `cursor`, checked to be ours, unaltered, and of this kind and query. */
  decode(parameter: string, cursor: string, kind: string, query: string): unknown {
    const invalid = () => {
      const error = new InvalidCursorError(`${parameter}: the cursor is not valid`);
      return new RestError(error.kind, error.message, {
        hint: error.hint,
        details: { parameter },
      });
    };
    const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(cursor);
    if (!match || cursor.length > MAX_CURSOR_LENGTH) throw invalid();
    const body = Buffer.from(match[1]!, "base64url");
    const mac = Buffer.from(match[2]!, "base64url");
    // Only the encoding `encode` writes: base64url's last character has bits no byte uses,
    // so other strings decode to the same bytes and would pass the MAC as a different cursor.
    if (body.toString("base64url") !== match[1] || mac.toString("base64url") !== match[2]) {
      throw invalid();
    }
    let payload: Payload | undefined;
    try {
      payload = JSON.parse(body.toString("utf8")) as Payload;
    } catch {
      payload = undefined;
    }
    const authentic = mac.length === MAC_BYTES && timingSafeEqual(mac, this.#mac(body));
    if (!authentic || typeof payload !== "object" || payload === null) {
      if (typeof payload?.e === "string" && payload.e !== this.#epoch) {
        const error = new ForeignCursorError();
        throw new RestError(error.kind, `${parameter}: ${error.message}`, {
          hint: error.hint,
          details: { parameter },
        });
      }
      throw invalid();
    }
    if (payload.k !== kind || payload.q !== query) throw new CursorMismatchError(parameter);
    return payload.p;
  }

  #mac(body: Buffer): Buffer {
    return createHmac("sha256", this.#key).update(body).digest().subarray(0, MAC_BYTES);
  }
}

/**
 * The MAC key: derived from this database's epoch uuid (written by the first migration and
 * never shown: cursors carry only a digest of it), its oid and the cluster's system
 * identifier, like the epoch itself. Every annal process on the database derives the same
 * key, so a cursor from one is good on all; a restored copy or another database has another.
 */
export async function loadCursorKey(db: Queryable): Promise<Buffer> {
  return createHash("sha256")
    .update(`annal-rest-cursor/${await databaseIdentity(db)}`)
    .digest();
}

/** A short digest naming a query, for a cursor's `q`. */
export function queryDigest(parts: unknown): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("base64url").slice(0, 16);
}
