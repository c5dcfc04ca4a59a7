import type { Queryable } from "../../db/index.ts";
import type { PublicJwk, SigningKey } from "./keys.ts";

/**
 * Publishes the key's public half in `signing_keys`, once: `GET /api/keys` then serves it from
 * every annal process on the database, and goes on serving it after the key is replaced, so
 * every export it signed can still be checked.
 */
export async function publishSigningKey(db: Queryable, key: SigningKey): Promise<void> {
  await db.query(
    `INSERT INTO signing_keys (kid, public_jwk) VALUES ($1, $2::jsonb) ON CONFLICT (kid) DO NOTHING`,
    [key.kid, JSON.stringify(key.publicJwk)],
  );
}

/** Every published public key, the first published first. */
export async function publishedSigningKeys(db: Queryable): Promise<PublicJwk[]> {
  const { rows } = await db.query<{ public_jwk: PublicJwk }>(
    "SELECT public_jwk FROM signing_keys ORDER BY published_at, kid",
  );
  return rows.map((row) => row.public_jwk);
}
