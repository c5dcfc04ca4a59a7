import {
  activateAccessConfiguration,
  createAuthentication,
  directoryOrigin,
  oidcOrigin,
  signInRoutes,
  type Authentication,
  type DirectoryOrigin,
  type OidcOrigin,
  type PrincipalSource,
} from "../auth/index.ts";
import type { AnnalConfig } from "../config/index.ts";
import type { Pool } from "../db/index.ts";
import { startDemoIdentityProvider } from "../demo/index.ts";
import { classifyError } from "../errors/index.ts";
import type { Logger } from "../logger.ts";
import type { EventStore } from "../store/index.ts";
import type { RunningDirectory } from "./directory.ts";
import type { Stoppable } from "./lifecycle.ts";

/** Accounts as a process runs them: the one authentication, and sign-in when it serves HTTP. */
export interface RunningAccounts extends Stoppable {
  readonly authentication: Authentication;
  /** The `/auth/*` routes, for the HTTP server. */
  readonly signInRoutes: ReturnType<typeof signInRoutes>;
  readonly publicUrl: string;
}

/** `[server] publicUrl`, or where annal listens (a wildcard address as the loopback one). */
export function publicUrlOf(config: AnnalConfig): string {
  if (config.server.publicUrl !== undefined) return config.server.publicUrl;
  const host = ["0.0.0.0", "::", "[::]"].includes(config.server.host)
    ? "127.0.0.1"
    : config.server.host;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.server.port}`;
}

/**
 * Accounts' place in start-up, after the directory: the Access Configuration of the file
 * made the active one (or deactivated), the demo OpenID provider when `[auth.oidc.demo]`
 * asks for it, the origins people sign in through, and the authentication every channel
 * uses (bearer tokens and the `service_session` cookie).
 */
export async function startAccounts(options: {
  readonly config: AnnalConfig;
  readonly pool: Pool;
  readonly store: EventStore;
  readonly directory: RunningDirectory;
  readonly serveHttp: boolean;
  readonly log: Logger;
}): Promise<RunningAccounts> {
  const { config, pool, store, directory, log } = options;
  const { auth } = config;
  const activation = await activateAccessConfiguration(pool, store, config.authorization);
  if (activation.outcome === "none") {
    log.warn(
      { code: "ANNAL_ACCESS_NOT_ACTIVE" },
      "no Access Configuration is active: people can sign in but may do nothing (add [authorization.activate])",
    );
  } else {
    log.info({ ...activation }, `Access Configuration ${activation.outcome}`);
  }

  const publicUrl = publicUrlOf(config);
  const base = auth.ldap?.base ?? config.directory?.base;
  let stopProvider = async () => {};
  const oidcConfig = auth.oidc;
  // The schema requires a clientSecret with [auth.oidc.demo]: the demo client is confidential.
  const demoSecret = oidcConfig?.clientSecret;
  if (
    oidcConfig?.demo !== undefined &&
    demoSecret !== undefined &&
    options.serveHttp &&
    directory.client &&
    base
  ) {
    const provider = await startDemoIdentityProvider({
      port: oidcConfig.demo.port,
      clientId: oidcConfig.clientId,
      clientSecret: demoSecret,
      redirectUri: `${publicUrl}/auth/callback`,
      directory: directory.client,
      base,
      pool,
      log,
    });
    stopProvider = () => provider.stop();
    log.info({ issuer: provider.issuer }, `demo OpenID provider on ${provider.issuer}`);
  }

  const oidc: OidcOrigin | undefined = oidcConfig
    ? oidcOrigin({
        config: oidcConfig,
        redirectUri: `${publicUrl}/auth/callback`,
        maxPrincipals: auth.maxPrincipals,
        ...(directory.client && base ? { directory: { client: directory.client, base } } : {}),
      })
    : undefined;
  const ldap: DirectoryOrigin | undefined =
    auth.ldap && directory.client && base
      ? directoryOrigin({
          directory: directory.client,
          base,
          userFilter: auth.ldap.userFilter,
          origin: auth.ldap.origin,
          maxPrincipals: auth.maxPrincipals,
        })
      : undefined;
  if (auth.ldap && ldap === undefined) {
    log.warn("[auth.ldap] needs the directory, which is not available: its sign-in is off");
  }
  const sources = new Map<string, PrincipalSource>();
  if (oidc) sources.set(oidc.origin, oidc.source);
  if (ldap) sources.set(ldap.origin, ldap.source);

  const authentication = createAuthentication({
    pool,
    people: {
      store,
      auth,
      sources,
      log: log.child({ component: "auth" }),
      publicOrigin: new URL(publicUrl).origin,
    },
  });
  return {
    authentication,
    publicUrl,
    signInRoutes: signInRoutes({
      pool,
      store,
      auth,
      publicUrl,
      authentication,
      ...(oidc ? { oidc } : {}),
      ...(ldap ? { ldap } : {}),
      classify: (error, requestId) => classifyError(error, requestId),
      log,
    }),
    stop: () => stopProvider(),
  };
}
