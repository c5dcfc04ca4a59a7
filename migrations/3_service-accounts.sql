-- Service accounts and their bearer tokens. Only a token's SHA-256 digest is stored: the
-- token itself is shown once, when it is created. Tokens are 256-bit random strings, so a
-- fast digest is enough (there is nothing to guess).
CREATE TABLE service_accounts (
  id uuid PRIMARY KEY,
  name text NOT NULL UNIQUE,
  access text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

CREATE TABLE service_account_tokens (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES service_accounts (id),
  digest bytea NOT NULL UNIQUE,
  -- The first characters of the token, to recognise it in `annal token list`.
  hint text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
