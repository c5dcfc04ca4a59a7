import { ExtensibleFilter, type Client, type Control } from "ldapts";
import { formatDN, formatRDN, parseDN, InvalidDNError } from "./dn-syntax.ts";
import {
  baseName,
  binaryNameList,
  fromSearchEntry,
  toAttribute,
  toChange,
  type AttributeValues,
  type DirectoryEntry,
  type Modification,
} from "./entry.ts";
import {
  DirectoryError,
  directoryError,
  isConnectionFailure,
  timeoutError,
  type DirectoryOperation,
} from "./errors.ts";
import type { FilterNode } from "../filters/index.ts";
import { assertAttributeName, present } from "./filter.ts";
import { INTERMEDIATE_RESPONSE, protocolOperation, SEARCH_RESULT_ENTRY } from "./framing.ts";
import { MatchedValuesControl } from "./matched-values.ts";
import { checkPassword } from "./password.ts";
import { collectEntries, readSearchResultEntry, stopCollecting } from "./search-entries.ts";
import { ConnectionPool } from "./pool.ts";
import { authzIdFor, ProxiedAuthorizationControl } from "./proxied-authorization.ts";
import { ShowDeletedControl } from "./show-deleted.ts";
import { SyncRequestControl } from "./sync-request.ts";
import { DirectoryTransport, type DirectoryTlsOptions } from "./transport.ts";
import { toWireFilter } from "./wire-filter.ts";
import { completeRanges, hasRanges } from "./ranges.ts";

export interface DirectoryClientOptions {
  /** `ldap://host:port` or `ldaps://host:port`. */
  readonly url: string;
  /** The account annal binds as; it needs read access, and write access for writes. */
  readonly bindDN: string;
  readonly password: string;
  /** Connections kept open at most (default 4). A paged search holds one until it ends. */
  readonly poolSize?: number;
  /** Default limit for one operation or one page of a search, and for the wait for a free connection (default 10 s). */
  readonly timeoutMs?: number;
  /** Limit for opening a TCP connection (default 5 s). */
  readonly connectTimeoutMs?: number;
  /**
   * TLS: the CAs to trust and the name to check for `ldaps://`, or StartTLS on `ldap://`. A
   * certificate that does not verify fails every operation with `ANNAL_LDAP_TLS_FAILED`.
   */
  readonly tls?: DirectoryTlsOptions;
}

export interface OperationOptions {
  /**
   * Run the operation as this identity (RFC 4370 proxied authorization): a DN, or an authzId
   * written `dn:…` or `u:…`. The directory checks the bound account may act as it, applies
   * the identity's access rights, and (slapd) records it in the accesslog's `reqAuthzID`.
   * A directory whose root DSE lists its supported controls without this one (Active
   * Directory has no RFC 4370) is written as the bound account instead: it would refuse the
   * critical control, and annal's note of intent still says who asked.
   */
  readonly as?: string;
  readonly timeoutMs?: number;
}

export interface ReadOptions extends OperationOptions {
  /** Attributes to return; default all user attributes. `+` adds the operational ones. */
  readonly attributes?: readonly string[];
  /** Attributes to return as Buffers (e.g. `jpegPhoto`, `userCertificate`). */
  readonly binaryAttributes?: readonly string[];
}

export interface SearchOptions extends ReadOptions {
  /** `sub` (default), `one` (children only), `base` (the entry), `children` (all below it). */
  readonly scope?: "base" | "one" | "sub" | "children";
  /** Default: every entry, `(objectClass=*)`. */
  readonly filter?: FilterNode;
  /**
   * In place of `filter`: an extensible match (RFC 4511 §4.5.1.7.7), `(attribute:rule:=value)`,
   * such as Active Directory's LDAP_MATCHING_RULE_IN_CHAIN (`member:1.2.840.113556.1.4.1941:`).
   * Only the directory answers it: annal's projections never do.
   */
  readonly extensibleMatch?: ExtensibleMatch;
  /** Entries per page (default 500); the server returns one page per request. */
  readonly pageSize?: number;
  /** Stop after this many entries in all (default: no limit of ours). */
  readonly sizeLimit?: number;
  /**
   * `false`: one plain search with no paged-results control (RFC 2696), for servers or
   * entries where paging is unwanted; the answer comes as one page, so give a `sizeLimit`.
   * Default `true`.
   */
  readonly paged?: boolean;
  /**
   * Of each entry found, only the values that match one of these simple filters (equality,
   * presence; RFC 3876 matched values): a group's members that are among a few people,
   * instead of its thousands. Attributes no item names are left out, so name the others
   * whole with `present`. A server without the control returns every value.
   */
  readonly matchedValues?: readonly FilterNode[];
  /**
   * With `matchedValues`: the matched values of an equality item may come as the items spell
   * them rather than as the entry does (they compare equal): enough for a caller that only
   * tells which items matched, and it lets annal's projections answer without reading a large
   * entry's list. The directory ignores it.
   */
  readonly matchedValuesAsAsked?: boolean;
  /**
   * Also find deleted objects (Active Directory's Show Deleted control, critical): the
   * tombstones under a naming context's `CN=Deleted Objects`.
   */
  readonly showDeleted?: boolean;
}

/** `(attribute:rule:=value)`: the values of `attribute` that match `value` by matching rule `rule`. */
export interface ExtensibleMatch {
  readonly attribute: string;
  /** The matching rule's OID. */
  readonly rule: string;
  readonly value: string;
}

export interface ModifyDNOptions extends OperationOptions {
  /** Move the entry under this parent; without it the entry is renamed in place. */
  readonly newSuperior?: string;
}

/**
 * annal's access to the directory: a pool of bound connections, operation timeouts, paged
 * searches that stream, and errors as `DirectoryError`s with stable codes.
 *
 * @example
 * const directory = createDirectoryClient({ url, bindDN, password });
 * for await (const page of directory.search("ou=people,dc=example,dc=org", { filter: eq("objectClass", "person") })) {
 *   for (const entry of page) console.log(entry.dn);
 * }
 * await directory.modify(dn, [{ operation: "replace", attribute: "title", values: "Lead" }], { as: aliceDN });
 * await directory.close();
 */
export class DirectoryClient {
  private readonly pool: ConnectionPool;
  private readonly transport: DirectoryTransport;
  private readonly url: string;
  /** The DN this client binds as: the author a directory records of its writes. */
  readonly bindDN: string;
  private readonly timeoutMs: number;

  /** Throws `ANNAL_LDAP_TLS_FAILED` when a file of `tls` cannot be read or used. */
  constructor(options: DirectoryClientOptions) {
    this.url = options.url;
    this.bindDN = options.bindDN;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.transport = new DirectoryTransport(options.url, options.tls);
    this.pool = new ConnectionPool({
      url: options.url,
      transport: this.transport,
      bindDN: options.bindDN,
      password: options.password,
      size: Math.max(1, options.poolSize ?? 4),
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    });
  }

  /**
   * Streams the entries under `base` page by page (RFC 2696 paged results), holding one
   * connection until the last page is read or the loop is left. A connection lost before the
   * first page is retried once on a fresh one.
   */
  async *search(
    base: string,
    options: SearchOptions = {},
  ): AsyncGenerator<DirectoryEntry[], void, undefined> {
    const filter = options.extensibleMatch
      ? extensibleFilter(options.extensibleMatch)
      : toWireFilter(options.filter ?? present("objectClass"));
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const binary = binarySet(options.binaryAttributes);
    const request = {
      scope: options.scope ?? "sub",
      filter,
      attributes: options.attributes ? [...options.attributes] : [],
      explicitBufferAttributes: binaryNameList(options.binaryAttributes),
      ...(options.paged === false ? {} : { paged: { pageSize: options.pageSize ?? 500 } }),
      ...(options.sizeLimit === undefined ? {} : { sizeLimit: options.sizeLimit }),
    };
    const controls = searchControls(options, await this.proxies(options));
    let yielded = false;
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.acquire("search", timeoutMs);
      const sink = collectEntries(client, binary);
      let healthy = false;
      try {
        await this.timed("search", base, timeoutMs, () => this.pool.bind(client));
        // ldapts's searchPaginated always sends the paged-results control: an unpaged search
        // is its plain search, answered as one page.
        const pages =
          options.paged === false
            ? onePage(() => client.search(base, request, controls))
            : client.searchPaginated(base, request, controls);
        // The next page is asked for before this one is handed over, so the directory
        // answers while the caller works on it (an import writes a page to the log meanwhile).
        // The page's entries are taken from the sink as soon as ldapts ends the page: the
        // next page is asked for only after that, so none of its entries can be among them.
        const ask = () => {
          const asked = this.timed("search", base, timeoutMs, () =>
            pages.next().then((page) => (page.done ? undefined : sink.drain())),
          );
          asked.catch(() => {}); // a caller that leaves early never awaits it
          return asked;
        };
        let next = ask();
        for (;;) {
          const entries = await next;
          if (entries === undefined) break;
          next = ask();
          if (entries.length === 0) continue;
          yielded = true;
          yield hasRanges(entries) ? await this.readRanges(entries, options) : entries;
        }
        healthy = true;
        return;
      } catch (error) {
        if (!yielded && attempt === 1 && isConnectionFailure(error)) continue;
        throw this.failure(error, "search", base);
      } finally {
        stopCollecting(client);
        // A search left half-way still has paging state on its connection: start afresh.
        if (healthy) this.pool.release(client);
        else this.pool.discard(client);
      }
    }
  }

  /**
   * Whether `password` is the password of `dn` (a bind of its own, not on the pool's
   * connections): how the directory origin signs people in. A directory that cannot be
   * reached throws a `DirectoryError`.
   */
  async checkPassword(dn: string, password: string): Promise<boolean> {
    try {
      return await checkPassword(
        { transport: this.transport, timeoutMs: this.timeoutMs },
        dn,
        password,
      );
    } catch (error) {
      throw this.failure(error, "bind", dn);
    }
  }

  /** Reads one entry; `undefined` when there is none with this DN. */
  async get(dn: string, options: ReadOptions = {}): Promise<DirectoryEntry | undefined> {
    const binary = binarySet(options.binaryAttributes);
    try {
      const result = await this.run("get", dn, options, true, (client, controls) =>
        client.search(
          dn,
          {
            scope: "base",
            filter: toWireFilter(present("objectClass")),
            attributes: options.attributes ? [...options.attributes] : [],
            explicitBufferAttributes: binaryNameList(options.binaryAttributes),
          },
          controls,
        ),
      );
      const found = result.searchEntries[0];
      if (found === undefined) return undefined;
      const entry = fromSearchEntry(found, binary);
      return hasRanges([entry]) ? (await this.readRanges([entry], options))[0] : entry;
    } catch (error) {
      if (error instanceof DirectoryError && error.code === "ANNAL_LDAP_NO_SUCH_OBJECT")
        return undefined;
      throw error;
    }
  }

  async add(
    dn: string,
    attributes: Readonly<Record<string, AttributeValues>>,
    options: OperationOptions = {},
  ): Promise<void> {
    const list = Object.entries(attributes).map(([type, values]) => toAttribute(type, values));
    await this.run("add", dn, options, false, (client, controls) => client.add(dn, list, controls));
  }

  async modify(
    dn: string,
    changes: readonly Modification[],
    options: OperationOptions = {},
  ): Promise<void> {
    const list = changes.map(toChange);
    await this.run("modify", dn, options, false, (client, controls) =>
      client.modify(dn, list, controls),
    );
  }

  /**
   * Renames an entry to `newRDN` (the old RDN's values are removed) and, with `newSuperior`,
   * moves it under another parent.
   */
  async modifyDN(dn: string, newRDN: string, options: ModifyDNOptions = {}): Promise<void> {
    const target = wireNewDN(newRDN, options.newSuperior);
    await this.run("modifyDN", dn, options, false, (client, controls) =>
      client.modifyDN(dn, target, controls),
    );
  }

  async delete(dn: string, options: OperationOptions = {}): Promise<void> {
    await this.run("delete", dn, options, false, (client, controls) => client.del(dn, controls));
  }

  /**
   * Keeps a search open on a connection of its own (RFC 4533 content synchronization,
   * `refreshAndPersist`) and calls `onEntry` for each entry the server sends: those that match
   * now, then each that comes to match, as it does, in the order the server sends them. With
   * no `attributes` only that an entry came is told (the search asks for none); with them,
   * `onEntry`'s `read` decodes the entry when called (a large one a slice at a time), so an
   * entry nobody reads costs nothing but its bytes. Returns when the server ends the search
   * (its time limit, say) or
   * `signal` aborts; throws a `DirectoryError` when the connection is lost, or the server will
   * not keep the search open (`ANNAL_LDAP_CONTROL_UNSUPPORTED`: OpenLDAP without `syncprov`
   * on the database searched).
   */
  async watch(
    base: string,
    options: {
      readonly scope?: "base" | "one" | "sub";
      readonly filter: FilterNode;
      readonly signal: AbortSignal;
      /** The attributes each entry comes with (default none). */
      readonly attributes?: readonly string[];
      readonly binaryAttributes?: readonly string[];
      readonly onEntry: (read: () => Promise<DirectoryEntry>) => void;
      /**
       * Called once, when the server has sent what matched at first and keeps the search open
       * (its first sync info message: RFC 4533's refreshDone).
       */
      readonly onPersisting?: () => void;
    },
  ): Promise<void> {
    const { signal, onEntry, onPersisting } = options;
    if (signal.aborted) return;
    const binary = binarySet(options.binaryAttributes);
    let persisting = false;
    const client = this.pool.own((message) => {
      const operation = protocolOperation(message);
      if (operation === SEARCH_RESULT_ENTRY) onEntry(() => readSearchResultEntry(message, binary));
      if (operation === INTERMEDIATE_RESPONSE && !persisting) {
        persisting = true;
        onPersisting?.();
      }
      // Entries, and the sync protocol's intermediate responses, which ldapts cannot parse:
      // ldapts sees only the search's end.
      const kept = operation === SEARCH_RESULT_ENTRY || operation === INTERMEDIATE_RESPONSE;
      return kept ? undefined : message;
    });
    const close = () => void client.unbind().catch(() => {});
    signal.addEventListener("abort", close, { once: true });
    try {
      await this.timed("bind", base, this.timeoutMs, () => this.pool.bind(client));
      await client.search(
        base,
        {
          scope: options.scope ?? "sub",
          filter: toWireFilter(options.filter),
          attributes: options.attributes?.length ? [...options.attributes] : ["1.1"],
        },
        [new SyncRequestControl()],
      );
    } catch (error) {
      if (!signal.aborted) throw this.failure(error, "search", base);
    } finally {
      signal.removeEventListener("abort", close);
      close();
    }
  }

  /**
   * The entries with their ranged attributes read whole (`completeRanges`), on a connection of
   * its own: the search that found them holds one of the pool's, and a pool of one would wait
   * for itself.
   */
  private async readRanges(
    entries: DirectoryEntry[],
    options: ReadOptions,
  ): Promise<DirectoryEntry[]> {
    const binary = binarySet(options.binaryAttributes);
    const client = this.pool.own((message) => message);
    try {
      await this.timed("search", entries[0]?.dn ?? "", this.timeoutMs, () =>
        this.pool.bind(client),
      );
      return await completeRanges(entries, async (dn, attribute) => {
        const result = await this.timed("search", dn, options.timeoutMs ?? this.timeoutMs, () =>
          client.search(dn, {
            scope: "base",
            filter: toWireFilter(present("objectClass")),
            attributes: [attribute],
            explicitBufferAttributes: binaryNameList(options.binaryAttributes),
          }),
        );
        const found = result.searchEntries[0];
        return found === undefined ? undefined : fromSearchEntry(found, binary);
      });
    } catch (error) {
      throw this.failure(error, "search", entries[0]?.dn ?? "");
    } finally {
      await client.unbind().catch(() => {});
    }
  }

  /** Whether the directory takes RFC 4370 proxied authorization (see `proxies`). */
  private proxiedAuthorization: Promise<boolean> | undefined;

  /**
   * Whether an operation with `as` is sent with the proxied authorization control: unless the
   * directory's root DSE lists the controls it supports and this is not among them (Active
   * Directory, whose DCs refuse it, critical as RFC 4370 has it, with unavailableCriticalExtension).
   * Read once, at the first operation with `as`; a root DSE that cannot be read is asked again
   * at the next, and the control is sent meanwhile.
   */
  private async proxies(options: OperationOptions): Promise<boolean> {
    if (options.as === undefined) return false;
    this.proxiedAuthorization ??= this.get("", { attributes: ["supportedControl"] }).then(
      (root) => {
        const listed = Object.entries(root?.attributes ?? {}).find(
          ([name]) => name.toLowerCase() === "supportedcontrol",
        )?.[1];
        if (!listed || listed.length === 0) return true;
        return listed.some((oid) => String(oid) === ProxiedAuthorizationControl.OID);
      },
      () => {
        this.proxiedAuthorization = undefined;
        return true;
      },
    );
    return this.proxiedAuthorization;
  }

  /** Unbinds every connection; operations after this fail with `ANNAL_LDAP_CLOSED`. */
  close(): Promise<void> {
    return this.pool.close();
  }

  /**
   * One operation on a pooled, bound connection within the time limit. A connection that
   * failed is discarded; the operation is tried once more on a fresh one when that is safe:
   * reads always, writes only when they failed before being sent (while binding), since a
   * write cut off in flight may have been applied.
   */
  private async run<T>(
    operation: DirectoryOperation,
    dn: string,
    options: OperationOptions,
    idempotent: boolean,
    send: (client: Client, controls: Control[]) => Promise<T>,
  ): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const controls = controlsFor(options, await this.proxies(options));
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.acquire(operation, timeoutMs);
      let sent = false;
      try {
        const result = await this.timed(operation, dn, timeoutMs, async () => {
          await this.pool.bind(client);
          sent = true;
          return send(client, controls);
        });
        this.pool.release(client);
        return result;
      } catch (error) {
        const connectionLost = isConnectionFailure(error);
        const timedOut = error instanceof DirectoryError && error.code === "ANNAL_LDAP_TIMEOUT";
        if (connectionLost || timedOut) this.pool.discard(client);
        else this.pool.release(client);
        if (connectionLost && attempt === 1 && (idempotent || !sent)) continue;
        throw this.failure(error, operation, dn);
      }
    }
  }

  /**
   * Races `work` against the time limit. The caller discards the connection after a timeout,
   * so that a late answer cannot be taken for the answer to a later request.
   */
  private async timed<T>(
    operation: DirectoryOperation,
    dn: string,
    timeoutMs: number,
    work: () => Promise<T>,
  ): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(timeoutError({ operation, dn, url: this.url, timeoutMs })),
        timeoutMs,
      );
    });
    const attempt = work();
    attempt.catch(() => {}); // after a timeout its rejection has no one waiting
    try {
      return await Promise.race([attempt, expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  private failure(error: unknown, operation: DirectoryOperation, dn: string): Error {
    return directoryError(error, {
      operation,
      dn,
      url: this.url,
      bindDN: this.bindDN,
      tls: this.transport.tls,
    });
  }
}

export function createDirectoryClient(options: DirectoryClientOptions): DirectoryClient {
  return new DirectoryClient(options);
}

function controlsFor(options: OperationOptions, proxied: boolean): Control[] {
  return options.as === undefined || !proxied
    ? []
    : [new ProxiedAuthorizationControl(authzIdFor(options.as))];
}

function searchControls(options: SearchOptions, proxied: boolean): Control[] {
  const controls = controlsFor(options, proxied);
  if (options.matchedValues !== undefined && options.matchedValues.length > 0) {
    controls.push(new MatchedValuesControl(options.matchedValues.map(toWireFilter)));
  }
  if (options.showDeleted) controls.push(new ShowDeletedControl());
  return controls;
}

function extensibleFilter(match: ExtensibleMatch): ExtensibleFilter {
  // annal's own rules only (never a caller's text): an OID.
  if (!/^\d+(\.\d+)+$/.test(match.rule))
    throw new Error(`not a matching rule's OID: ${match.rule}`);
  return new ExtensibleFilter({
    matchType: assertAttributeName(match.attribute),
    rule: match.rule,
    value: match.value,
  });
}

function binarySet(names: readonly string[] | undefined): ReadonlySet<string> {
  return new Set((names ?? []).map(baseName));
}

/**
 * The `newDN` string ldapts' modifyDN takes: it splits it at the first comma not preceded by a
 * backslash into the new RDN and the new superior. Writing backslashes in values as `\5c`
 * makes that split land on the real separator even for a value that ends in a backslash.
 */
function wireNewDN(newRDN: string, newSuperior: string | undefined): string {
  const rdns = parseDN(newRDN);
  const rdn = rdns[0];
  if (rdn === undefined || rdns.length !== 1)
    throw new InvalidDNError(newRDN, "a new RDN is one RDN, such as uid=alice");
  const safe = (text: string): string => text.replace(/\\\\/g, "\\5c");
  if (newSuperior === undefined) return safe(formatRDN(rdn));
  return `${safe(formatRDN(rdn))},${formatDN(parseDN(newSuperior))}`;
}

async function* onePage<T>(search: () => Promise<T>): AsyncGenerator<T, void, undefined> {
  yield await search();
}
