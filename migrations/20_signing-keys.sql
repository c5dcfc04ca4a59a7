-- The public halves of the keys that have signed exports (src/audit/signing/): every annal
-- process publishes its key here when it first uses it, and `GET /api/keys` serves them all,
-- so an export signed by any process (each data directory generates a key of its own when none
-- is configured), or by a key since replaced, is checked with the keys any process serves.
-- Public keys only: a private key never enters the database.
CREATE TABLE signing_keys (
  kid text PRIMARY KEY,
  public_jwk jsonb NOT NULL,
  published_at timestamptz NOT NULL DEFAULT statement_timestamp()
);
