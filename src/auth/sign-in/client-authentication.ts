import * as client from "openid-client";
import type { AuthConfig } from "../../config/index.ts";
import { AnnalError } from "../../errors/index.ts";

type OidcConfig = NonNullable<AuthConfig["oidc"]>;
export type TokenEndpointAuthMethod = NonNullable<OidcConfig["tokenEndpointAuthMethod"]>;

/** The confidential methods annal knows, in the order it prefers them. */
const SECRET_METHODS = ["client_secret_basic", "client_secret_post"] as const;

/**
 * How annal authenticates at the provider's token endpoint: `[auth.oidc]
 * tokenEndpointAuthMethod` when set; `none` (a public client, PKCE only) without a secret;
 * else the first of `client_secret_basic`, `client_secret_post` the provider's metadata lists
 * (RFC 8414: an absent `token_endpoint_auth_methods_supported` means `client_secret_basic`).
 * A provider that takes neither is `ANNAL_SIGN_IN_UNAVAILABLE`, saying what it takes.
 *
 * @example
 * clientAuthentication({ ...config, clientSecret: "s" }, { issuer,
 *   token_endpoint_auth_methods_supported: ["client_secret_post"] }).method
 * // "client_secret_post"
 */
export function clientAuthentication(
  config: Pick<OidcConfig, "clientSecret" | "tokenEndpointAuthMethod">,
  metadata: Pick<client.ServerMetadata, "token_endpoint_auth_methods_supported">,
): { readonly method: TokenEndpointAuthMethod; readonly auth: client.ClientAuth } {
  const method = config.tokenEndpointAuthMethod ?? chooseMethod(config.clientSecret, metadata);
  if (method === "none") return { method, auth: client.None() };
  // The configuration's schema requires a secret with either confidential method.
  const secret = config.clientSecret ?? "";
  return {
    method,
    auth:
      method === "client_secret_basic"
        ? client.ClientSecretBasic(secret)
        : client.ClientSecretPost(secret),
  };
}

function chooseMethod(
  secret: string | undefined,
  metadata: Pick<client.ServerMetadata, "token_endpoint_auth_methods_supported">,
): TokenEndpointAuthMethod {
  if (secret === undefined) return "none";
  const supported = metadata.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
  const chosen = SECRET_METHODS.find((method) => supported.includes(method));
  if (chosen !== undefined) return chosen;
  throw new AnnalError(
    "ANNAL_SIGN_IN_UNAVAILABLE",
    `the identity provider takes a client secret by none of ${SECRET_METHODS.join(", ")} (it lists ${supported.join(", ") || "nothing"})`,
    {
      hint: 'set [auth.oidc] tokenEndpointAuthMethod, or remove clientSecret for a public client ("none")',
    },
  );
}
