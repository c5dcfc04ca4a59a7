import * as client from "openid-client";
import type { AuthConfig } from "../../config/index.ts";
import type { DirectoryClient } from "../../directory/index.ts";
import { normalizeDN } from "../../directory/index.ts";
import { AnnalError } from "../../errors/index.ts";
import type { FoundPrincipals, PersonIdentity } from "../persons.ts";
import type { PrincipalSource } from "../session-caller.ts";
import type { ProviderTokens } from "../sessions.ts";
import { clientAuthentication } from "./client-authentication.ts";
import { fillFilterTemplate } from "./filter-template.ts";

type OidcConfig = NonNullable<AuthConfig["oidc"]>;

export interface OidcOriginOptions {
  readonly config: OidcConfig;
  /** `<publicUrl>/auth/callback`. */
  readonly redirectUri: string;
  readonly maxPrincipals: number;
  /** For `personFilter`: where the person's entry is looked for. */
  readonly directory?: { readonly client: DirectoryClient; readonly base: string };
}

/** What a sign-in needs kept between sending the browser away and its return. */
export interface PendingSignIn {
  readonly url: URL;
  readonly state: string;
  readonly codeVerifier: string;
  readonly nonce: string;
}

export interface OidcSignIn {
  readonly identity: PersonIdentity;
  readonly principals: FoundPrincipals;
  readonly tokens: ProviderTokens;
}

/**
 * An OpenID provider as an origin (openid-client): the authorization code flow with PKCE,
 * `state` and `nonce`; principals from the groups claim (of the ID token, else of userinfo),
 * refreshed with the refresh token (or the access token while it lasts). Group values that
 * are DNs are normalised; others become `group:<value>`.
 */
export function oidcOrigin(options: OidcOriginOptions) {
  const { config } = options;
  const scopes = [...new Set(["openid", ...config.scopes])].join(" ");
  let discovered: Promise<client.Configuration> | undefined;

  /** The provider's metadata, read once; a failed read is tried again next time. */
  const provider = (): Promise<client.Configuration> => {
    discovered ??= discover(config).catch((error: unknown) => {
      discovered = undefined;
      throw unavailable(error);
    });
    return discovered;
  };

  const principalsOf = async (
    configuration: client.Configuration,
    claims: Record<string, unknown>,
    accessToken: string | undefined,
  ): Promise<FoundPrincipals> => {
    let groups = claims[config.groupsClaim];
    if (groups === undefined && accessToken !== undefined) {
      const info = await client.fetchUserInfo(configuration, accessToken, String(claims.sub));
      groups = info[config.groupsClaim];
    }
    const values = Array.isArray(groups) ? groups.filter((g) => typeof g === "string") : [];
    const principals = new Set(values.map(groupPrincipal));
    const sorted = [...principals].sort();
    return { principals: sorted.slice(0, options.maxPrincipals + 1), count: sorted.length };
  };

  const dnOf = async (claims: Record<string, unknown>): Promise<string | null> => {
    if (config.personFilter === undefined || options.directory === undefined) return null;
    const values = Object.fromEntries(
      Object.entries(claims).filter(
        (entry): entry is [string, string] => typeof entry[1] === "string",
      ),
    );
    const filter = fillFilterTemplate(config.personFilter, values);
    const found = [];
    for await (const page of options.directory.client.search(options.directory.base, {
      filter,
      attributes: ["1.1"],
      sizeLimit: 2,
      paged: false,
    })) {
      found.push(...page);
    }
    return found.length === 1 ? found[0]!.dn : null;
  };

  const source: PrincipalSource = {
    async refresh(account, tokens) {
      const configuration = await provider();
      try {
        let accessToken = tokens?.accessToken;
        let next: ProviderTokens | undefined;
        if (tokens?.refreshToken !== undefined) {
          const refreshed = await client.refreshTokenGrant(configuration, tokens.refreshToken);
          accessToken = refreshed.access_token;
          next = {
            accessToken: refreshed.access_token,
            refreshToken: refreshed.refresh_token ?? tokens.refreshToken,
          };
        }
        if (accessToken === undefined) throw new Error("no token to ask the provider with");
        const found = await principalsOf(configuration, { sub: account.subject }, accessToken);
        return next === undefined ? found : { ...found, tokens: next };
      } catch (error) {
        throw unavailable(error);
      }
    },
  };

  return {
    origin: config.origin,
    source,
    /** Where to send the browser to sign in, and what to keep until it returns. */
    async start(): Promise<PendingSignIn> {
      const configuration = await provider();
      const codeVerifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const url = client.buildAuthorizationUrl(configuration, {
        redirect_uri: options.redirectUri,
        scope: scopes,
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: "S256",
        state,
        nonce,
      });
      return { url, state, codeVerifier, nonce };
    },
    /**
     * Finishes a sign-in with the provider's answer (`callbackUrl`, with `code` and `state`):
     * exchanges the code (with the PKCE verifier), checks the ID token (its signature against
     * the provider's JWKS, issuer, audience, expiry, nonce), reads the groups. A refused or
     * forged answer is `ANNAL_SIGN_IN_FAILED`.
     */
    async finish(
      callbackUrl: URL,
      pending: { readonly state: string; readonly codeVerifier: string; readonly nonce: string },
    ): Promise<OidcSignIn> {
      const configuration = await provider();
      let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
      try {
        tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: pending.state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        });
      } catch (error) {
        if (isUnreachable(error)) throw unavailable(error);
        throw new AnnalError(
          "ANNAL_SIGN_IN_FAILED",
          `the identity provider's answer was refused: ${describe(error)}`,
          { cause: error },
        );
      }
      const claims = (tokens.claims() ?? {}) as Record<string, unknown>;
      const subject = claims.sub;
      if (typeof subject !== "string" || subject === "") {
        throw new AnnalError("ANNAL_SIGN_IN_FAILED", "the ID token names no subject");
      }
      const text = (name: string) =>
        typeof claims[name] === "string" ? (claims[name] as string) : undefined;
      try {
        return {
          identity: {
            origin: config.origin,
            subject,
            name: text("preferred_username") ?? text("email") ?? subject,
            displayName: text("name") ?? null,
            dn: await dnOf(claims),
          },
          principals: await principalsOf(configuration, claims, tokens.access_token),
          tokens: {
            accessToken: tokens.access_token,
            ...(tokens.refresh_token === undefined ? {} : { refreshToken: tokens.refresh_token }),
          },
        };
      } catch (error) {
        throw unavailable(error);
      }
    },
  };
}

export type OidcOrigin = ReturnType<typeof oidcOrigin>;

/** How long annal waits for any answer of the provider, in seconds. */
const PROVIDER_TIMEOUT = 10;

/**
 * The provider as openid-client's configuration: its discovery document, the token endpoint
 * authentication it and `[auth.oidc]` agree on, and every ID token's signature checked
 * against its published keys (JWKS). openid-client checks the signature of an ID token only
 * when asked to (`enableNonRepudiationChecks`): by default it trusts the token endpoint's TLS,
 * and an `http://` issuer (loopback, or `allowInsecureIssuer`) has none.
 */
async function discover(config: OidcConfig): Promise<client.Configuration> {
  const insecure = new URL(config.issuer).protocol === "http:";
  const found = await client.discovery(
    new URL(config.issuer),
    config.clientId,
    undefined,
    undefined,
    {
      timeout: PROVIDER_TIMEOUT,
      execute: insecure ? [client.allowInsecureRequests] : [],
    },
  );
  const metadata = found.serverMetadata();
  const { auth } = clientAuthentication(config, metadata);
  const configuration = new client.Configuration(metadata, config.clientId, undefined, auth);
  configuration.timeout = PROVIDER_TIMEOUT;
  if (insecure) client.allowInsecureRequests(configuration);
  client.enableNonRepudiationChecks(configuration);
  return configuration;
}

/** A group the provider names: a DN in annal's normalised form, else `group:<name>`. */
function groupPrincipal(value: string): string {
  if (value.includes("=")) {
    try {
      return normalizeDN(value);
    } catch {
      // not a DN after all
    }
  }
  return `group:${value}`;
}

function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown; cause?: { code?: unknown } })?.code;
  return (
    code === "OAUTH_RESPONSE_IS_NOT_CONFORM" ||
    error instanceof TypeError ||
    (error as { name?: string })?.name === "AbortError" ||
    (error as { name?: string })?.name === "TimeoutError"
  );
}

/** openid-client's own words on why an answer was refused (never a token or a code). */
function describe(error: unknown): string {
  const { error: oauthError, error_description: description } =
    (error as {
      error?: unknown;
      error_description?: unknown;
    }) ?? {};
  if (typeof oauthError === "string") {
    return typeof description === "string" ? `${oauthError} (${description})` : oauthError;
  }
  return error instanceof Error ? error.message : "an unexpected answer";
}

function unavailable(error: unknown): AnnalError {
  if (error instanceof AnnalError) return error;
  return new AnnalError("ANNAL_SIGN_IN_UNAVAILABLE", "the identity provider could not be reached", {
    cause: error,
  });
}
