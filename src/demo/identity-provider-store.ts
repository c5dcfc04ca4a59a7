/**
 * Where the demo OpenID provider keeps its state: oidc-provider's adapter interface on
 * annal's PostgreSQL (`demo_oidc`), so a person signed in with demo-sso keeps their grant and
 * refresh token across a restart, and the provider's signing key and cookie secret, so what
 * it issued before a restart still verifies after it. Expired rows are never answered and
 * are removed as they are met.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import type { Adapter, AdapterPayload } from "oidc-provider";
import type { Pool } from "../db/index.ts";

/** Models whose rows belong to a grant and go when it is revoked. */
const GRANTABLE = new Set([
  "AccessToken",
  "AuthorizationCode",
  "RefreshToken",
  "DeviceCode",
  "BackchannelAuthenticationRequest",
]);

/** An oidc-provider adapter class over `demo_oidc`, one instance per model. */
export function postgresAdapter(pool: Pool): new (model: string) => Adapter {
  return class PostgresAdapter implements Adapter {
    readonly model: string;
    constructor(model: string) {
      this.model = model;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      await pool.query(
        `INSERT INTO demo_oidc (model, id, payload, grant_id, user_code, uid, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6,
                 CASE WHEN $7::integer IS NULL THEN NULL ELSE now() + make_interval(secs => $7) END)
         ON CONFLICT (model, id) DO UPDATE SET payload = $3, grant_id = $4, user_code = $5,
           uid = $6, expires_at = EXCLUDED.expires_at`,
        [
          this.model,
          id,
          JSON.stringify(payload),
          GRANTABLE.has(this.model) ? (payload.grantId ?? null) : null,
          payload.userCode ?? null,
          payload.uid ?? null,
          Number.isFinite(expiresIn) ? Math.ceil(expiresIn) : null,
        ],
      );
    }

    find(id: string): Promise<AdapterPayload | undefined> {
      return this.findWhere("id = $2", id);
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.findWhere("uid = $2", uid);
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.findWhere("user_code = $2", userCode);
    }

    async consume(id: string): Promise<void> {
      await pool.query(
        `UPDATE demo_oidc
            SET payload = payload || jsonb_build_object('consumed', extract(epoch FROM now())::bigint)
          WHERE model = $1 AND id = $2`,
        [this.model, id],
      );
    }

    async destroy(id: string): Promise<void> {
      await pool.query("DELETE FROM demo_oidc WHERE model = $1 AND id = $2", [this.model, id]);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await pool.query("DELETE FROM demo_oidc WHERE grant_id = $1", [grantId]);
    }

    private async findWhere(condition: string, value: string): Promise<AdapterPayload | undefined> {
      const { rows } = await pool.query<{ payload: AdapterPayload; expired: boolean }>(
        `SELECT payload, coalesce(expires_at <= now(), false) AS expired
           FROM demo_oidc WHERE model = $1 AND ${condition} LIMIT 1`,
        [this.model, value],
      );
      const row = rows[0];
      if (row === undefined) return undefined;
      if (row.expired) {
        await pool.query("DELETE FROM demo_oidc WHERE model = $1 AND expires_at <= now()", [
          this.model,
        ]);
        return undefined;
      }
      return row.payload;
    }
  };
}

/** The provider's signing key (a private JWK) and cookie secret. */
export interface DemoProviderSecrets {
  readonly signingKey: Record<string, unknown>;
  readonly cookieKey: string;
}

/**
 * The secrets made at the provider's first start and read at every later one (a key is made
 * only when none is stored). Two processes starting at once agree: the first insert wins and
 * both read it.
 */
export async function demoProviderSecrets(pool: Pool): Promise<DemoProviderSecrets> {
  const stored = async () =>
    (
      await pool.query<{ payload: DemoProviderSecrets }>(
        "SELECT payload FROM demo_oidc WHERE model = '_secrets' AND id = 'provider'",
      )
    ).rows[0]?.payload;
  const found = await stored();
  if (found) return found;
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const made: DemoProviderSecrets = {
    signingKey: privateKey.export({ format: "jwk" }) as Record<string, unknown>,
    cookieKey: randomBytes(32).toString("base64url"),
  };
  await pool.query(
    `INSERT INTO demo_oidc (model, id, payload) VALUES ('_secrets', 'provider', $1)
     ON CONFLICT (model, id) DO NOTHING`,
    [JSON.stringify(made)],
  );
  return (await stored())!;
}
