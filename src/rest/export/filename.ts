import { RestError } from "../errors.ts";

/** A name for the downloaded file: no path, no control characters, at most 255 characters. */
export function checkFilename(filename: string): string {
  const bad =
    filename.length > 255 ||
    /[\\/\p{Cc}\p{Cf}\p{Zl}\p{Zp}"]/u.test(filename) ||
    filename.startsWith(".") ||
    filename.trim() !== filename;
  if (bad) {
    throw new RestError(
      "ANNAL_FILENAME_INVALID",
      "filename: expected a file name without a path, quotes or control characters, at most 255 characters, not starting with a dot",
      { hint: "e.g. filename=users.csv", details: { parameter: "filename" } },
    );
  }
  return filename;
}

/**
 * `Content-Disposition: attachment` naming the file (RFC 6266): an ASCII `filename` for old
 * clients (other characters as `_`) and `filename*` with the name in UTF-8 (RFC 8187).
 */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, "_").replace(/[%;]/g, "_");
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
