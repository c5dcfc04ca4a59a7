import { readFileSync } from "node:fs";
import path from "node:path";
import { startAnnal, type RunningAnnal } from "../../src/app/index.ts";
import type { AnnalConfig } from "../../src/config/index.ts";
import { freePort } from "../../src/ports.ts";
import { sampleLdif, startDemoIdentityProvider } from "../../src/demo/index.ts";
import { createDirectoryClient } from "../../src/directory/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { capturedLogger } from "../http/support.ts";
import { appConfig } from "./app-config.ts";
import { testDatabase, type TestDatabase } from "./postgres.ts";
import { startSlapd, type Slapd } from "./slapd.ts";

const REPO = path.resolve(import.meta.dirname, "../..");
const GATEWAY = path.join(REPO, "ops/demo/gateway");

/**
 * The demo's gateway (its schema, types and translations) with introspection on, and a
 * `[[graphql.rest]]` backend that nothing answers: annal as a test runs it over the demo
 * organisation.
 */
/**
 * The demo's \`[[calendars]]\` tables, as ops/demo/annal.toml has them: the access request's
 * deadlines count in working days.
 */
export const DEMO_CALENDARS_TOML = readFileSync(
  new URL("../../ops/demo/annal.toml", import.meta.url),
  "utf8",
)
  .split(/\n(?=\[)/)
  .filter((table) => table.startsWith("[[calendars]]"))
  .join("\n");

export const GATEWAY_TOML = `[graphql]
introspection = true
schema = ["${GATEWAY}/*.graphql"]

[graphql.types.Person]
base = "ou=people,dc=example,dc=org"
objectClass = ["inetOrgPerson"]

[graphql.types.Group]
base = "ou=groups,dc=example,dc=org"
objectClass = ["groupOfNames"]

[graphql.types.Department]
base = "ou=people,dc=example,dc=org"
objectClass = ["organizationalUnit"]

[[graphql.rest]]
name = "annal"
base = "http://127.0.0.1:1"

[i18n]
fallbackLanguage = "en"
translations = "${GATEWAY}/i18n"

${DEMO_CALENDARS_TOML}
`;

export const PROSSI = "uid=prossi,ou=engineering,ou=people,dc=example,dc=org";
export const OWOJCIK = "uid=owojcik,ou=engineering,ou=people,dc=example,dc=org";
export const DEMO_PASSWORD = "demo";

/** The demo's Access Configuration, as ops/demo/annal.toml has it. */
export const DEMO_GRANTS = `[authorization.grants]
read = [
  "cn=engineering,ou=groups,dc=example,dc=org",
  "cn=sales,ou=groups,dc=example,dc=org",
  "cn=finance,ou=groups,dc=example,dc=org",
  "cn=support,ou=groups,dc=example,dc=org",
]
write = ["cn=annal-operators,ou=roles,dc=example,dc=org"]
export = ["cn=annal-operators,ou=roles,dc=example,dc=org"]
operator = ["cn=annal-operators,ou=roles,dc=example,dc=org"]
auditor = ["cn=annal-auditors,ou=roles,dc=example,dc=org"]
`;

export interface AccountsAnnal {
  readonly url: string;
  readonly config: AnnalConfig;
  readonly db: TestDatabase;
  readonly slapd: Slapd;
  readonly store: EventStore;
  readonly annal: RunningAnnal;
  readonly logged: ReturnType<typeof capturedLogger>;
  /** The demo OpenID provider's issuer. */
  readonly issuer: string;
  /** Stops the provider, when the test started it (`provider: "test"`). */
  stopProvider(): Promise<void>;
  /** GraphQL over real HTTP with the given headers (a cookie, a token). */
  graphql(
    query: string,
    headers: Record<string, string>,
    variables?: Record<string, unknown>,
  ): Promise<{ status: number; body: { data?: any; errors?: any[] } }>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * annal as `annal start` runs it, against the demo organisation in a slapd of the test's own
 * and a database of its own, with sign-in both ways: the demo OpenID provider (started by
 * annal from `[auth.oidc.demo]`, on a free port) and the directory's form. `activate`
 * (default true) activates the demo's grants; `authToml` adds keys to `[auth]`.
 */
export async function startAccountsAnnal(
  test: { testdir(): string; teardown(fn: () => unknown): void },
  options: {
    activate?: boolean;
    authToml?: string;
    grantsToml?: string;
    extraToml?: string;
    /** More keys of `[database]` (`poolSize = 3`). */
    databaseToml?: string;
    seedLdif?: string;
    slapd?: Slapd;
    /** The test's database (default: a new one on the suite's server). */
    db?: TestDatabase;
    /** Between capture passes (default "1h": the tests that need capture run it themselves). */
    captureInterval?: string;
    /**
     * Who starts the demo provider: annal itself (`[auth.oidc.demo]`, the default), or this
     * support, so that the test can stop it (`stopProvider`) to make the origin unreachable.
     */
    provider?: "annal" | "test";
    /** `annal start --dev`: the rules file is watched. */
    development?: boolean;
    /** An `[auth.oidc]` table of the test's own (a foreign provider) instead of the demo's. */
    oidcToml?: string;
  } = {},
): Promise<AccountsAnnal> {
  const slapd =
    options.slapd ?? (await startSlapd({ seedLdif: `${sampleLdif()}\n${options.seedLdif ?? ""}` }));
  if (!options.slapd) test.teardown(() => slapd.stop());
  const db = options.db ?? (await testDatabase(test));
  const providerPort = await freePort();
  const config = await appConfig(test, {
    db,
    slapd,
    captureInterval: options.captureInterval ?? "1h",
    ...(options.databaseToml === undefined ? {} : { databaseToml: options.databaseToml }),
    extraToml: `${options.extraToml ?? ""}
${GATEWAY_TOML}
[auth]
${options.authToml ?? ""}

${
  options.oidcToml ??
  `[auth.oidc]
issuer = "http://127.0.0.1:${providerPort}"
clientId = "annal-test"
clientSecret = "\${LDAP_PASSWORD}"
origin = "demo-sso"
personFilter = "(uid={preferred_username})"

${options.provider === "test" ? "" : `[auth.oidc.demo]\nport = ${providerPort}`}`
}

[auth.ldap]
origin = "directory"

${options.grantsToml ?? DEMO_GRANTS}
${
  options.activate === false
    ? ""
    : `[authorization.activate]
version = 1
by = "the test"`
}
`,
  });
  let stopProvider = async () => {};
  if (options.provider === "test") {
    const directory = createDirectoryClient({
      url: slapd.url,
      bindDN: slapd.bindDN,
      password: slapd.password,
    });
    const provider = await startDemoIdentityProvider({
      port: providerPort,
      clientId: "annal-test",
      clientSecret: slapd.password,
      redirectUri: `http://127.0.0.1:${config.server.port}/auth/callback`,
      directory,
      base: slapd.base,
    });
    let stopped = false;
    stopProvider = async () => {
      if (stopped) return;
      stopped = true;
      await provider.stop();
    };
    test.teardown(async () => {
      await stopProvider();
      await directory.close();
    });
  }
  const logged = capturedLogger();
  const annal = await startAnnal({
    config,
    log: logged.log,
    ...(options.development === undefined ? {} : { development: options.development }),
  });
  test.teardown(() => annal.stop());
  const url = annal.url!;
  return {
    url,
    config,
    db,
    slapd,
    store: await EventStore.open(db.pool),
    annal,
    logged,
    issuer: `http://127.0.0.1:${providerPort}`,
    stopProvider: () => stopProvider(),
    async graphql(query, headers, variables) {
      const response = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: url, ...headers },
        body: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
      });
      return { status: response.status, body: (await response.json()) as never };
    },
  };
}
