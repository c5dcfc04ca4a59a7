/**
 * Active Directory's replication metadata of one object's attributes: for each attribute, how
 * many times it was written (its version), when and by which DC its last write was made, and
 * the USN of that write on the DC read (`usnLocalChange`). Every attribute one LDAP write
 * changes gets that write's USN, so the attributes of an object grouped by their local USN are
 * the writes whose results still show, one group a write, in the order the DC applied them.
 *
 * AD serves it as `msDS-ReplAttributeMetaData` (XML text, constructed: `parseReplMetadataXml`),
 * which Samba (4.17) answers with nothing; Samba serves the stored form, `replPropertyMetaData`
 * (MS-DRSR 5.167
 * `PROPERTY_META_DATA_EXT_VECTOR`, little-endian): `dwVersion` (1), a reserved word, `cNumEntries`,
 * a reserved word, then per attribute 48 bytes: `attrType` (an ATTRTYP), `dwVersion`,
 * `timeChanged` (seconds since 1601), the originating DC's `uuidDsaOriginating` (16 bytes),
 * `usnOriginating` and `usnProperty` (the local USN), 8 bytes each.
 */
export const REPL_METADATA_ATTRIBUTE = "replPropertyMetaData";

/** The same as XML, one value an attribute (MS-ADTS 3.1.1.4.5.19.1): a Windows DC's. */
export const REPL_METADATA_XML_ATTRIBUTE = "msDS-ReplAttributeMetaData";

export interface AttributeMetadata {
  /** The attribute's OID, when its ATTRTYP is in the default prefix table; else undefined. */
  readonly oid: string | undefined;
  /** Its name, where the metadata gives it (the XML form). */
  readonly name?: string;
  /** How many times the attribute was written since the object was made. */
  readonly version: number;
  /** When its last write was made, to the second. */
  readonly changedAt: Date;
  /** The USN of its last write on the DC read. */
  readonly localUsn: bigint;
}

const HEADER_BYTES = 16;
const ENTRY_BYTES = 48;
/** Seconds from 1601-01-01 (Windows' epoch) to 1970-01-01. */
const EPOCH_1601_SECONDS = 11_644_473_600n;

/** The metadata of each attribute, or undefined when the bytes are not a version 1 vector. */
export function parseReplMetadata(bytes: Buffer): AttributeMetadata[] | undefined {
  if (bytes.length < HEADER_BYTES || bytes.readUInt32LE(0) !== 1) return undefined;
  const count = bytes.readUInt32LE(8);
  if (bytes.length < HEADER_BYTES + count * ENTRY_BYTES) return undefined;
  const entries: AttributeMetadata[] = [];
  for (let i = 0; i < count; i++) {
    const at = HEADER_BYTES + i * ENTRY_BYTES;
    const seconds = bytes.readBigUInt64LE(at + 8) - EPOCH_1601_SECONDS;
    entries.push({
      oid: attributeOid(bytes.readUInt32LE(at)),
      version: bytes.readUInt32LE(at + 4),
      changedAt: new Date(Number(seconds) * 1000),
      localUsn: bytes.readBigUInt64LE(at + 40),
    });
  }
  return entries;
}

/**
 * The metadata from `msDS-ReplAttributeMetaData`'s values, each a `DS_REPL_ATTR_META_DATA`
 * element (`pszAttributeName`, `dwVersion`, `ftimeLastOriginatingChange`, `usnLocalChange`, ...);
 * values that are not one are left out.
 */
export function parseReplMetadataXml(values: readonly string[]): AttributeMetadata[] {
  const entries: AttributeMetadata[] = [];
  for (const value of values) {
    const field = xmlFields(value);
    const name = field.get("pszAttributeName");
    const version = Number(field.get("dwVersion"));
    const changedAt = xmlTime(field.get("ftimeLastOriginatingChange"));
    const localUsn = xmlUsn(field.get("usnLocalChange"));
    if (!name || !Number.isSafeInteger(version) || !changedAt || localUsn === undefined) continue;
    entries.push({ oid: undefined, name, version, changedAt, localUsn });
  }
  return entries;
}

/**
 * Per-value metadata of linked attributes (a group's `member`), which AD keeps for each value
 * since linked-value replication (forest level 2003): a Windows DC answers it as
 * `msDS-ReplValueMetaData` (constructed, asked by name; in ranges for a large group, which the
 * directory's range retrieval reads whole), one XML `DS_REPL_VALUE_META_DATA` a value (MS-DRSR
 * 4.1.13.1.25's `DS_REPL_VALUE_META_DATA_2` as text). A value removed is kept, with
 * `ftimeDeleted` set, until the tombstone lifetime passes. Samba (4.17) answers it with nothing
 * and keeps the same stamps as extended-DN components (`RMD_LOCAL_USN`, ...) that its LDAP
 * server does not show.
 */
export const REPL_VALUE_METADATA_XML_ATTRIBUTE = "msDS-ReplValueMetaData";

/** One value's stamp: when it was added and removed, and the USN of its last write here. */
export interface ValueMetadata {
  /** The linked attribute, by its LDAP display name (`member`). */
  readonly attribute: string;
  /** The value: the DN it links to. */
  readonly dn: string;
  /** When it was first added; undefined for a value older than linked-value replication. */
  readonly createdAt: Date | undefined;
  /** When it was removed; undefined while it is a value (the XML's 1601-01-01, FILETIME 0). */
  readonly deletedAt: Date | undefined;
  /** How many times it was written (an add, a remove, an add again: 3). */
  readonly version: number;
  /** When its last write was made, to the second. */
  readonly changedAt: Date;
  /** The USN of its last write on the DC read: the write that added or removed it. */
  readonly localUsn: bigint;
}

/**
 * The stamps from `msDS-ReplValueMetaData`'s values, each a `DS_REPL_VALUE_META_DATA` element
 * (`pszAttributeName`, `pszObjectDn`, `ftimeDeleted`, `ftimeCreated`, `dwVersion`,
 * `ftimeLastOriginatingChange`, `usnLocalChange`, ...); values that are not one are left out.
 */
export function parseReplValueMetadataXml(values: readonly string[]): ValueMetadata[] {
  const entries: ValueMetadata[] = [];
  for (const value of values) {
    const field = xmlFields(value);
    const attribute = field.get("pszAttributeName");
    const dn = field.get("pszObjectDn");
    const version = Number(field.get("dwVersion"));
    const changedAt = xmlTime(field.get("ftimeLastOriginatingChange"));
    const localUsn = xmlUsn(field.get("usnLocalChange"));
    if (!attribute || !dn || !Number.isSafeInteger(version) || !changedAt) continue;
    if (localUsn === undefined) continue;
    const createdAt = xmlTime(field.get("ftimeCreated"));
    const deletedAt = xmlTime(field.get("ftimeDeleted"));
    entries.push({
      attribute,
      dn,
      createdAt: isSet(createdAt) ? createdAt : undefined,
      deletedAt: isSet(deletedAt) ? deletedAt : undefined,
      version,
      changedAt,
      localUsn,
    });
  }
  return entries;
}

/**
 * The text of each element of one metadata value (`<tag>text</tag>`, the first of a name),
 * with XML's escapes read back: a DN such as `CN=Smith & Jones` comes as `Smith &amp; Jones`.
 */
function xmlFields(value: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const [, tag, text] of value.matchAll(/<(\w+)>([^<]*)<\/\1>/g)) {
    if (!fields.has(tag!)) fields.set(tag!, unescapeXml(text!));
  }
  return fields;
}

const XML_ENTITIES: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
};

function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) => {
    if (name[0] !== "#") return XML_ENTITIES[name] ?? whole;
    const code =
      name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : Number(name.slice(1));
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

function xmlTime(text: string | undefined): Date | undefined {
  const time = text === undefined ? NaN : Date.parse(text);
  return Number.isNaN(time) ? undefined : new Date(time);
}

function xmlUsn(text: string | undefined): bigint | undefined {
  return text !== undefined && /^\d+$/.test(text) ? BigInt(text) : undefined;
}

/** FILETIME 0 (1601-01-01T00:00:00Z, as the XML writes it) is "never". */
const NEVER = Date.UTC(1601, 0, 1);

function isSet(time: Date | undefined): time is Date {
  return time !== undefined && time.getTime() > NEVER;
}

/**
 * An ATTRTYP's OID through the default prefix table every DC starts with (MS-DRSR 5.16.4):
 * the upper 16 bits index a prefix, the lower 16 are the OID's last arc. Attributes of schema
 * extensions get prefixes a DC adds to its own table (or an msDS-IntId, 0x8000_0000 and up):
 * undefined, and capture treats their changes as it treats those it has no metadata for.
 */
export function attributeOid(attrType: number): string | undefined {
  const prefix = DEFAULT_PREFIXES[attrType >>> 16];
  const arc = attrType & 0xffff;
  return prefix === undefined || arc >= 0x4000 ? undefined : `${prefix}.${arc}`;
}

/** MS-DRSR 5.16.4's table, index by index (Samba's prefixMap of a new domain starts with it). */
const DEFAULT_PREFIXES: readonly string[] = [
  "2.5.4",
  "2.5.6",
  "1.2.840.113556.1.2",
  "1.2.840.113556.1.3",
  "2.16.840.1.101.2.2.1",
  "2.16.840.1.101.2.2.3",
  "2.16.840.1.101.2.1.5",
  "2.16.840.1.101.2.1.4",
  "2.5.5",
  "1.2.840.113556.1.4",
  "1.2.840.113556.1.5",
  "1.2.840.113556.1.4.260",
  "1.2.840.113556.1.5.56",
  "1.2.840.113556.1.4.262",
  "1.2.840.113556.1.5.57",
  "1.2.840.113556.1.4.263",
  "1.2.840.113556.1.5.58",
  "1.2.840.113556.1.5.73",
  "1.2.840.113556.1.4.305",
  "0.9.2342.19200300.100",
  "2.16.840.1.113730.3",
  "0.9.2342.19200300.100.1",
  "2.16.840.1.113730.3.1",
  "1.2.840.113556.1.5.7000",
  "2.5.21",
  "2.5.18",
  "2.5.20",
  "1.3.6.1.4.1.1466.101.119",
  "2.16.840.1.113730.3.2",
  "1.3.6.1.4.1.250.1",
  "1.2.840.113549.1.9",
  "0.9.2342.19200300.100.4",
  "1.2.840.113556.1.6.23",
  "1.2.840.113556.1.6.18.1",
  "1.2.840.113556.1.6.18.2",
  "1.2.840.113556.1.6.13.3",
  "1.2.840.113556.1.6.13.4",
  "1.3.6.1.1.1.1",
  "1.3.6.1.1.1.2",
];
