import { InvalidCursorError, ForeignCursorError } from "./errors.ts";
import type { LogPosition } from "./types.ts";

/**
 * Cursors are opaque to clients: base64url of `<epoch>.<transaction id>.<position>`. The
 * epoch names the database the position belongs to (see `loadEpoch`), so a cursor carried
 * over to another database is refused instead of silently skipping or repeating events.
 */
export function encodeCursor(epoch: string, at: LogPosition): string {
  return Buffer.from(`${epoch}.${at.transactionId}.${at.position}`).toString("base64url");
}

export function decodeCursor(epoch: string, cursor: string): LogPosition {
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursorError();
  const match = /^([0-9a-f]{16})\.(\d{1,20})\.(\d{1,16})$/.exec(
    Buffer.from(cursor, "base64url").toString("latin1"),
  );
  if (!match) throw new InvalidCursorError();
  const [, cursorEpoch, transactionId, position] = match as unknown as [
    string,
    string,
    string,
    string,
  ];
  if (cursorEpoch !== epoch) throw new ForeignCursorError();
  const at = { transactionId: BigInt(transactionId).toString(), position: Number(position) };
  // One position, one cursor: only the string encodeCursor writes (no leading zeros, no
  // other last character of the same bytes) is taken.
  if (!Number.isSafeInteger(at.position) || encodeCursor(epoch, at) !== cursor) {
    throw new InvalidCursorError();
  }
  return at;
}
