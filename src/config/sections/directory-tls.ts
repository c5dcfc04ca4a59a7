import { z } from "zod";
import { configPath, parseUrl, type SectionContext, text } from "../fields.ts";

// A DNS name or an IP address, as a certificate's subjectAltName or CN would hold it.
const SERVER_NAME =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*\.?|[0-9A-Fa-f:.]+)$/;

/** `[directory.tls]`: how annal's connections to the directory use TLS. */
export function directoryTls(ctx: SectionContext) {
  return z
    .strictObject(
      {
        caFile: configPath(ctx).optional().meta({
          description:
            "PEM file of the certificate authorities that may issue the directory's certificate (one or more certificates); only these are trusted. Without it, the CAs Node.js trusts (its bundled list and `NODE_EXTRA_CA_CERTS`) and those of this system's store (`/etc/ssl/certs`).",
          example: "/etc/annal/directory-ca.pem",
        }),
        serverName: text()
          .regex(SERVER_NAME, "expected a host name such as dc1.example.org")
          .optional()
          .meta({
            description:
              "The name the directory's certificate must carry, when it is not the host of `[directory] url`: a server reached at `127.0.0.1` whose certificate names `dc1.example.org` (Samba AD's own certificate names `<HOSTNAME>.<realm>`, in its CN only). Sent as the TLS server name (SNI) too. Default: the URL's host.",
            example: "dc1.example.org",
          }),
        startTLS: z.boolean({ error: "expected true or false" }).default(false).meta({
          description:
            "With an `ldap://` URL: upgrade each connection with StartTLS (RFC 4513) before anything else is sent, the bind's password included. A directory that refuses StartTLS fails with `ANNAL_LDAP_TLS_FAILED`. Not with `ldaps://`, which is TLS from the start.",
          example: true,
        }),
        certFile: configPath(ctx).optional().meta({
          description:
            "PEM file of a certificate annal shows the directory, for a directory that requires one of its clients (OpenLDAP's `TLSVerifyClient demand`). With `keyFile`.",
          example: "/etc/annal/annal-client.pem",
        }),
        keyFile: configPath(ctx).optional().meta({
          description: "PEM file of the private key of `certFile`.",
          example: "/etc/annal/annal-client.key",
        }),
        keyPassphrase: text().optional().meta({
          description: "The passphrase of `keyFile`, when the key is encrypted.",
          example: "${ANNAL_CLIENT_KEY_PASSPHRASE}",
        }),
      },
      { error: "expected a table: [directory.tls]" },
    )
    .superRefine((tls, ctx) => {
      if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) {
        ctx.addIssue({
          code: "custom",
          path: [tls.certFile === undefined ? "certFile" : "keyFile"],
          message: "a client certificate needs both certFile and keyFile",
        });
      }
      if (tls.keyPassphrase !== undefined && tls.keyFile === undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["keyPassphrase"],
          message: "keyPassphrase opens keyFile, which is not set",
        });
      }
    })
    .optional()
    .meta({
      description:
        "TLS to the directory: the CAs to trust and the name to check, for an `ldaps://` URL or with StartTLS on `ldap://`. A certificate that does not verify is `ANNAL_LDAP_TLS_FAILED`, whose message says what did not match (the name, the CA, the dates).",
    });
}

/**
 * Refuses `[directory.tls]` settings the URL would leave unused: StartTLS on `ldaps://`, or
 * a CA file (and the rest) on a plain `ldap://` connection, which would then not be TLS at all.
 */
export function checkTlsFitsUrl(
  directory: { readonly url: string; readonly tls?: z.output<ReturnType<typeof directoryTls>> },
  ctx: z.RefinementCtx,
): void {
  const { tls } = directory;
  if (tls === undefined) return;
  const ldaps = parseUrl(directory.url)?.protocol === "ldaps:";
  if (ldaps && tls.startTLS) {
    ctx.addIssue({
      code: "custom",
      path: ["tls", "startTLS"],
      message:
        "StartTLS upgrades an ldap:// connection; an ldaps:// URL is TLS from the start: remove startTLS, or use ldap://",
    });
  }
  const set = (["caFile", "serverName", "certFile", "keyFile"] as const).filter(
    (key) => tls[key] !== undefined,
  );
  if (!ldaps && !tls.startTLS && set.length > 0) {
    ctx.addIssue({
      code: "custom",
      path: ["tls", set[0]!],
      message:
        "an ldap:// connection is not TLS: set startTLS = true, or use an ldaps:// URL, for this to apply",
    });
  }
}
