import { SLAPD_BASE } from "./config.ts";

/** One entry to write as LDIF; attributes in the order they should appear. */
export interface LdifEntry {
  readonly dn: string;
  readonly attributes: Readonly<Record<string, readonly (string | Buffer)[]>>;
}

/**
 * RFC 2849 SAFE-STRING: ASCII without NUL, CR or LF, not starting with space, `:` or `<`.
 * A trailing space is legal but easily lost, so it is base64 too (as ldapsearch does).
 */
function isSafeString(value: string): boolean {
  return (
    /^[\x01-\x09\x0b\x0c\x0e-\x1f\x21-\x39\x3b\x3d-\x7f][\x01-\x09\x0b\x0c\x0e-\x7f]*$/.test(
      value,
    ) && !value.endsWith(" ")
  );
}

/** Folds a line at 76 columns; a continuation line starts with one space (RFC 2849). */
function fold(line: string): string {
  if (line.length <= 76) return line;
  const parts = [line.slice(0, 76)];
  for (let at = 76; at < line.length; at += 75) parts.push(` ${line.slice(at, at + 75)}`);
  return parts.join("\n");
}

function ldifLine(type: string, value: string | Buffer): string {
  if (typeof value === "string" && (value === "" || isSafeString(value))) {
    return fold(`${type}: ${value}`);
  }
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : value;
  return fold(`${type}:: ${bytes.toString("base64")}`);
}

/** Serialises entries as an LDIF content file (no `changetype`), as slapadd and ldapadd read. */
export function toLdif(entries: Iterable<LdifEntry>): string {
  const blocks: string[] = [];
  for (const entry of entries) blocks.push(ldifBlock(entry));
  return blocks.length === 0 ? "" : `${blocks.join("\n\n")}\n`;
}

/**
 * The same LDIF as `toLdif`, a piece per thousand entries: for a seed too large for one
 * string (a million people is more than V8 holds in one).
 */
export function* toLdifChunks(entries: Iterable<LdifEntry>): Generator<string> {
  let blocks: string[] = [];
  let first = true;
  for (const entry of entries) {
    blocks.push(ldifBlock(entry));
    if (blocks.length === 1000) {
      yield `${first ? "" : "\n"}${blocks.join("\n\n")}\n`;
      first = false;
      blocks = [];
    }
  }
  if (blocks.length > 0) yield `${first ? "" : "\n"}${blocks.join("\n\n")}\n`;
}

function ldifBlock(entry: LdifEntry): string {
  const lines = [ldifLine("dn", entry.dn)];
  for (const [type, values] of Object.entries(entry.attributes)) {
    for (const value of values) lines.push(ldifLine(type, value));
  }
  return lines.join("\n");
}

/** The entries every private directory starts with: the suffix and its three branches. */
export function baseEntries(): LdifEntry[] {
  const ou = (name: string, description: string): LdifEntry => ({
    dn: `ou=${name},${SLAPD_BASE}`,
    attributes: { objectClass: ["organizationalUnit"], ou: [name], description: [description] },
  });
  return [
    {
      dn: SLAPD_BASE,
      attributes: { objectClass: ["dcObject", "organization"], dc: ["example"], o: ["Example"] },
    },
    ou("people", "People"),
    ou("groups", "Groups"),
    ou("services", "Service accounts"),
  ];
}
