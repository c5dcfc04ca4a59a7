import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import net from "node:net";
import tls from "node:tls";
import { Duplex } from "node:stream";
import { BerReader, Client, ExtendedRequest, ExtendedResponse, StatusCodeParser } from "ldapts";
import { DirectoryError } from "./errors.ts";
import { messageLength } from "./framing.ts";
import { rememberShownCertificate, StartTLSRefusedError, type TlsSettings } from "./tls-failure.ts";

/** TLS to the directory: `ldaps://`, or StartTLS (RFC 4513 §3) on `ldap://`. */
export interface DirectoryTlsOptions {
  /**
   * PEM file of the CAs that may issue the directory's certificate; only these are trusted.
   * Without it, the CAs Node.js trusts (and `NODE_EXTRA_CA_CERTS`) and the system's store.
   */
  readonly caFile?: string;
  /**
   * The name the directory's certificate must carry, when it is not the URL's host: a server
   * reached at 127.0.0.1 whose certificate names `dc1.example.org`. Sent as SNI too.
   */
  readonly serverName?: string;
  /** On `ldap://`: StartTLS before anything else is sent on each connection. */
  readonly startTLS?: boolean;
  /** PEM files of a certificate and key annal shows, for a directory that asks for one. */
  readonly certFile?: string;
  readonly keyFile?: string;
  /** The passphrase of an encrypted `keyFile`. */
  readonly keyPassphrase?: string;
}

/** The options of ldapts's `Client` that annal sets per connection. */
interface ConnectionLimits {
  readonly connectTimeout: number;
  readonly timeout?: number;
  readonly autoRebind?: boolean;
}

const START_TLS = "1.3.6.1.4.1.1466.20037";

/**
 * How connections to one directory are opened: in the clear, with TLS from the start
 * (`ldaps://`), or with StartTLS. The CA, client certificate and key are read once, here; a
 * file that cannot be read, or a key that does not open, throws `ANNAL_LDAP_TLS_FAILED`.
 *
 * StartTLS is done below ldapts, on the socket: each connection asks for it and then runs TLS
 * over the same socket, which ldapts sees as a TLS connection from the start. ldapts's own
 * `startTLS()` (9.2) has two faults here: a reconnect it makes on its own (between annal's
 * check and an operation) is in the clear, and it never notices that an upgraded connection
 * closed, so the next operation on it waits for its time limit.
 */
export class DirectoryTransport {
  readonly url: string;
  /** Undefined for a plain `ldap://` connection. */
  readonly tls: TlsSettings | undefined;
  private readonly clientUrl: string;
  private readonly connectionOptions: tls.ConnectionOptions | undefined;

  constructor(url: string, options: DirectoryTlsOptions = {}) {
    this.url = url;
    this.clientUrl = url;
    const parsed = new URL(url);
    const ldaps = parsed.protocol === "ldaps:";
    const startTLS = options.startTLS === true;
    if (ldaps && startTLS) {
      throw new TypeError(`StartTLS upgrades an ldap:// connection; ${url} is TLS from the start`);
    }
    if (!ldaps && !startTLS) {
      this.tls = undefined;
      this.connectionOptions = undefined;
      return;
    }
    const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
    const checkedName = options.serverName ?? host;
    const ca = options.caFile === undefined ? undefined : readCAs(options.caFile);
    this.tls = {
      url,
      startTLS,
      caFile: options.caFile,
      trustedCAs: ca?.subjects ?? [],
      checkedName,
      clientCertificate: options.certFile !== undefined,
    };
    this.connectionOptions = {
      secureContext: secureContext(options, ca?.pem),
      // Node checks the `servername`, else the host it connects to: the name checked is said
      // here, whatever way the connection is made.
      checkServerIdentity: (_name, certificate) =>
        tls.checkServerIdentity(checkedName, certificate),
      ...(net.isIP(checkedName) === 0 ? { servername: checkedName } : {}),
    };
    if (startTLS) {
      // ldapts makes a TLS connection for an ldaps:// URL (with the port written out: StartTLS
      // is spoken on the ldap:// port, 389 by default) with `createSecureConnection`.
      const port = parsed.port === "" ? "389" : parsed.port;
      this.clientUrl = `ldaps://${parsed.hostname}:${port}`;
    }
  }

  /** A new, not yet connected client; ldapts connects on the first bind. */
  client(limits: ConnectionLimits): Client {
    const base = { url: this.clientUrl, ...limits };
    if (this.tls === undefined) return new Client(base);
    return new Client({
      ...base,
      tlsOptions: this.connectionOptions,
      createSecureConnection: this.tls.startTLS ? connectWithStartTLS : connectRemembering,
    });
  }
}

/** `tls.connect` over a socket that has asked for StartTLS first and been granted it. */
const connectWithStartTLS = ((port: number, host: string, options: tls.ConnectionOptions) => {
  const socket = connectRemembering({ ...options, socket: startTlsSocket(port, host) });
  // Over a stream of its own, a TLS socket says "open" at once, and ldapts (seeing an open
  // socket) would take it as connected before the handshake, and report its failure as a
  // lost connection. It is "opening" until the handshake is done, as a TCP one would be.
  let handshaken = false;
  socket.once("secureConnect", () => (handshaken = true));
  const readyState = Object.getOwnPropertyDescriptor(net.Socket.prototype, "readyState")!.get!;
  Object.defineProperty(socket, "readyState", {
    configurable: true,
    get: () => (handshaken ? readyState.call(socket) : "opening"),
  });
  return socket;
}) as typeof tls.connect;

/**
 * A connection to `host:port` that sends the StartTLS extended request (RFC 4511 §4.14.1) as
 * soon as it is open and, once the directory grants it, carries what is written to it: the
 * TLS handshake that `tls.connect` starts at once waits here until then. A refusal destroys
 * it with a `StartTLSRefusedError`, which `tls.connect` reports.
 */
function startTlsSocket(port: number, host: string): Duplex {
  const socket = net.connect(port, host);
  const waiting: { chunk: Buffer; callback: (error?: Error | null) => void }[] = [];
  let granted = false;
  let answer = Buffer.alloc(0);
  const stream = new Duplex({
    write(chunk: Buffer, _encoding, callback) {
      if (granted) socket.write(chunk, callback);
      else waiting.push({ chunk, callback });
    },
    read() {
      socket.resume();
    },
    final(callback) {
      socket.end(callback);
    },
    destroy(error, callback) {
      socket.destroy();
      callback(error);
    },
  });
  socket.once("connect", () => {
    socket.write(new ExtendedRequest({ messageId: 1, oid: START_TLS }).write());
  });
  socket.on("data", (chunk: Buffer) => {
    if (granted) {
      if (!stream.push(chunk)) socket.pause();
      return;
    }
    answer = Buffer.concat([answer, chunk]);
    const length = messageLength(answer, 0);
    if (length === undefined || answer.length < length) return;
    const refusal = startTlsRefusal(answer.subarray(0, length));
    if (refusal) {
      stream.destroy(refusal);
      return;
    }
    granted = true;
    const rest = answer.subarray(length);
    if (rest.length > 0) stream.push(rest);
    for (const { chunk, callback } of waiting.splice(0)) socket.write(chunk, callback);
  });
  socket.once("end", () => stream.push(null));
  socket.on("error", (error) => stream.destroy(error));
  socket.once("close", () => stream.destroy());
  return stream;
}

/** The directory's answer to StartTLS: undefined when it grants it, else why not. */
function startTlsRefusal(message: Buffer): Error | undefined {
  const reader = new BerReader(message);
  reader.readSequence();
  const messageId = reader.readInt() ?? 0;
  const response = new ExtendedResponse({ messageId });
  if (reader.readSequence() !== response.protocolOperation) {
    // A notice of disconnection (message 0), or an answer to nothing annal asked.
    return new StartTLSRefusedError(2, "it answered with another message");
  }
  response.parse(reader, []);
  if (response.status === 0) return undefined;
  return new StartTLSRefusedError(
    response.status,
    StatusCodeParser.parse(response).message.replace(/\s*Code: 0x[0-9a-f]+$/i, ""),
  );
}

/**
 * `tls.connect`, keeping the certificate the server showed for the message of a failed
 * handshake: Node's verification errors do not carry it. Read on the socket's `secure`
 * event, which comes before Node verifies the certificate (an event Node does not document:
 * should it go, a message names less, and nothing else changes); the verification is Node's.
 */
const connectRemembering = ((...args: Parameters<typeof tls.connect>) => {
  const socket = (tls.connect as (...a: unknown[]) => tls.TLSSocket)(...args);
  let shown: tls.DetailedPeerCertificate | undefined;
  socket.prependListener("secure", () => {
    const certificate = socket.getPeerCertificate(true);
    if (certificate && Object.keys(certificate).length > 0) shown = certificate;
  });
  socket.prependOnceListener("error", (error: Error) => {
    if (shown) rememberShownCertificate(error, shown);
  });
  return socket;
}) as typeof tls.connect;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function readPem(path: string, what: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw setupError(`cannot read ${what} ${path}: ${(error as Error).message}`, error);
  }
}

function readCAs(path: string): { pem: string; subjects: string[] } {
  const pem = readPem(path, "the CA file");
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  const subjects: string[] = [];
  for (const block of blocks) {
    try {
      subjects.push(new X509Certificate(block).subject.split("\n").reverse().join(", "));
    } catch (error) {
      throw setupError(`the CA file ${path} holds a certificate that cannot be read`, error);
    }
  }
  if (subjects.length === 0) {
    throw setupError(`the CA file ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  return { pem, subjects };
}

function secureContext(options: DirectoryTlsOptions, ca: string | undefined): tls.SecureContext {
  const { certFile, keyFile, keyPassphrase } = options;
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw setupError("a client certificate needs both its certificate file and its key file");
  }
  const client =
    certFile !== undefined && keyFile !== undefined
      ? {
          cert: readPem(certFile, "the client certificate"),
          key: readPem(keyFile, "the client key"),
          ...(keyPassphrase === undefined ? {} : { passphrase: keyPassphrase }),
        }
      : {};
  try {
    return tls.createSecureContext({
      ca: ca ?? [...tls.getCACertificates("default"), ...tls.getCACertificates("system")],
      ...client,
    });
  } catch (error) {
    // OpenSSL's words, which never hold the passphrase: "bad decrypt", "key values mismatch".
    const what =
      certFile === undefined
        ? "TLS cannot be set up"
        : `the client certificate ${certFile} and key ${keyFile} cannot be used`;
    throw setupError(`${what}: ${(error as Error).message}`, error);
  }
}

function setupError(message: string, cause?: unknown): DirectoryError {
  return new DirectoryError("ANNAL_LDAP_TLS_FAILED", message, {
    operation: "bind",
    status: 502,
    hint: "check the files of [directory.tls] (PEM), and keyPassphrase for an encrypted key",
    ...(cause === undefined ? {} : { cause }),
  });
}
