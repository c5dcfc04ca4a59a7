import { z } from "zod";
import {
  duration,
  integer,
  isLoopbackHost,
  parseUrl,
  port,
  text,
  urlWithScheme,
} from "../fields.ts";

const ORIGIN = /^[a-z][a-z0-9-]{0,31}$/;
const RESERVED_ORIGINS = new Set(["service"]);

/** How annal authenticates itself at the provider's token endpoint (RFC 8414's names). */
const TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"] as const;

function origin(fallback: string) {
  return text()
    .regex(ORIGIN, "expected lower-case letters, digits and -, starting with a letter")
    .refine((name) => !RESERVED_ORIGINS.has(name), {
      message: '"service" is service accounts\' origin',
    })
    .default(fallback);
}

function session() {
  return z
    .strictObject(
      {
        idleTimeout: duration().prefault("2h").meta({
          description:
            "A session unused this long ends: the next request with its cookie is refused.",
          example: "30m",
        }),
        absoluteTimeout: duration().prefault("12h").meta({
          description: "A session ends this long after its sign-in, however much it is used.",
          example: "8h",
        }),
      },
      { error: "expected a table: [auth.session]" },
    )
    .prefault({})
    .meta({ description: "The `service_session` cookie's sessions." });
}

function signInLimits() {
  return z
    .strictObject(
      {
        perAccount: integer(1, 10_000).default(5).meta({
          description: "Failed sign-ins one login may have in a window before it waits.",
          example: 10,
        }),
        perAddress: integer(1, 100_000).default(100).meta({
          description:
            "Sign-in attempts one client address may make in a window (each OpenID sign-in is two: its start and its return). People behind one proxy share an address: raise it for them.",
          example: 500,
        }),
        window: duration()
          .prefault("15m")
          .meta({ description: "The window both limits count in.", example: "5m" }),
      },
      { error: "expected a table: [auth.rateLimit]" },
    )
    .prefault({})
    .meta({
      description:
        "Sign-in attempts, per account and per address, counted in the database so that every annal process shares them (`ANNAL_SIGN_IN_RATE_LIMITED`).",
    });
}

function oidcDemo() {
  return z
    .strictObject(
      {
        port: port()
          .default(4174)
          .meta({ description: "Port the demo OpenID provider listens on (loopback only)." }),
      },
      { error: "expected a table: [auth.oidc.demo]" },
    )
    .optional()
    .meta({
      description:
        "Only in the demo configuration: annal starts a real OpenID provider (oidc-provider) on `127.0.0.1:<port>`, whose users are the demo directory's people, checked by an LDAP bind. `issuer` must be `http://127.0.0.1:<port>`.",
    });
}

function oidc() {
  return z
    .strictObject(
      {
        issuer: urlWithScheme(["https:", "http:"], "https://login.example.org").meta({
          description:
            "The OpenID provider's issuer URL; annal reads `/.well-known/openid-configuration` under it.",
          example: "https://login.example.org/realms/staff",
        }),
        clientId: text().meta({
          description: "annal's client id at the provider.",
          example: "annal",
        }),
        clientSecret: text().optional().meta({
          description:
            'annal\'s client secret at the provider (always a `${VARIABLE}` reference). Without it annal is a public client (`tokenEndpointAuthMethod = "none"`), proven by PKCE alone.',
          example: "${OIDC_CLIENT_SECRET}",
        }),
        tokenEndpointAuthMethod: z
          .enum(TOKEN_ENDPOINT_AUTH_METHODS, {
            error: `expected one of ${TOKEN_ENDPOINT_AUTH_METHODS.join(", ")}`,
          })
          .optional()
          .meta({
            description:
              "How annal authenticates at the token endpoint: `client_secret_basic` (the secret in an Authorization header), `client_secret_post` (in the form body) or `none` (a public client: no secret, PKCE). Default: `none` without `clientSecret`; else the first of `client_secret_basic`, `client_secret_post` that the provider's `token_endpoint_auth_methods_supported` lists (`client_secret_basic` when it lists none).",
            example: "client_secret_post",
          }),
        allowInsecureIssuer: z.boolean({ error: "expected true or false" }).default(false).meta({
          description:
            "Allow an `http://` issuer that is not on loopback. Off, such an issuer is refused: without TLS anyone on the path could read the codes and tokens. Every ID token's signature is checked against the provider's published keys (JWKS) either way.",
          example: true,
        }),
        origin: origin("oidc").meta({
          description:
            "The name of this identity provider in annal: the origin of the accounts it vouches for.",
          example: "staff-sso",
        }),
        scopes: z
          .array(text(), { error: "expected an array of scopes" })
          .default(["openid", "profile", "email", "groups"])
          .meta({ description: "Scopes asked for; `openid` is added when missing." }),
        groupsClaim: text().default("groups").meta({
          description:
            "The claim (of the ID token, else of the userinfo answer) that lists the person's groups: their principals.",
          example: "memberOf",
        }),
        personFilter: text()
          .refine((filter) => filter.startsWith("(") && filter.endsWith(")"), {
            message: "expected an LDAP filter in parentheses, such as (uid={preferred_username})",
          })
          .optional()
          .meta({
            description:
              "How to find the person's directory entry, so that their writes are made as them: an RFC 4515 filter with `{claim}` placeholders filled from the ID token (escaped). Without it, people of this origin have no DN and cannot write.",
            example: "(uid={preferred_username})",
          }),
        demo: oidcDemo(),
      },
      { error: "expected a table: [auth.oidc]" },
    )
    .superRefine((oidc, ctx) => {
      const issuer = parseUrl(oidc.issuer);
      if (
        issuer?.protocol === "http:" &&
        !isLoopbackHost(issuer.hostname) &&
        !oidc.allowInsecureIssuer
      ) {
        ctx.addIssue({
          code: "custom",
          path: ["issuer"],
          message:
            "expected an https:// issuer (http:// only on loopback, or with allowInsecureIssuer = true)",
        });
      }
      const method = oidc.tokenEndpointAuthMethod;
      if (
        oidc.clientSecret === undefined &&
        ((method !== undefined && method !== "none") || oidc.demo !== undefined)
      ) {
        ctx.addIssue({
          code: "custom",
          path: ["clientSecret"],
          message: `expected a clientSecret ${oidc.demo === undefined ? `with tokenEndpointAuthMethod = "${method}"` : "for the demo provider's client"}`,
        });
      }
      if (oidc.clientSecret !== undefined && method === "none") {
        ctx.addIssue({
          code: "custom",
          path: ["clientSecret"],
          message:
            'a public client (tokenEndpointAuthMethod = "none") sends no secret: remove clientSecret',
        });
      }
      if (oidc.demo === undefined) return;
      if (oidc.issuer.replace(/\/$/, "") !== `http://127.0.0.1:${oidc.demo.port}`) {
        ctx.addIssue({
          code: "custom",
          path: ["issuer"],
          message: `with [auth.oidc.demo], expected http://127.0.0.1:${oidc.demo.port}, where the demo provider listens`,
        });
      }
    })
    .optional()
    .meta({
      description:
        "Sign-in by OpenID Connect (authorization code with PKCE) at `/auth/login`. The provider must send the browser back to `<publicUrl>/auth/callback`.",
    });
}

function ldap() {
  return z
    .strictObject(
      {
        origin: origin("directory").meta({
          description: "The origin of the accounts the directory vouches for.",
          example: "ldap",
        }),
        userFilter: text()
          .refine((filter) => filter.includes("{login}"), {
            message: "expected a filter naming {login}, such as (uid={login})",
          })
          .default("(uid={login})")
          .meta({
            description:
              "How to find a person by the login they type: an RFC 4515 filter where `{login}` is the login, escaped.",
            example: "(|(uid={login})(mail={login}))",
          }),
        base: text().optional().meta({
          description: "Where people are looked for; default `[directory] base`.",
          example: "ou=people,dc=example,dc=org",
        }),
      },
      { error: "expected a table: [auth.ldap]" },
    )
    .optional()
    .meta({
      description:
        "Sign-in by an LDAP bind against the directory (a login form at `/auth/login`), for directories without an identity provider. Principals are the groups the person is a member of, nested groups resolved.",
    });
}

export function authSection() {
  return z
    .strictObject(
      {
        maxPrincipals: integer(1, 1_000_000).default(7_000).meta({
          description:
            "Most principals an account may have; an account with more can do nothing (`AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED`).",
          example: 10_000,
        }),
        principalsRefresh: duration().prefault("15m").meta({
          description:
            "How long principals are trusted before the identity provider is asked again. When it cannot be reached past this, commands fail with `WF_AUTHORIZATION_DENIED` (reads go on).",
          example: "5m",
        }),
        session: session(),
        rateLimit: signInLimits(),
        oidc: oidc(),
        ldap: ldap(),
      },
      { error: "expected a table: [auth]" },
    )
    .prefault({})
    .meta({
      description:
        "People's accounts: sign-in at `/auth/login` (OpenID Connect, an LDAP bind, or both), the `service_session` cookie, principals.",
    });
}

/** The resolved `[auth]` section. */
export type AuthConfig = z.output<ReturnType<typeof authSection>>;
