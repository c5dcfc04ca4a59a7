-- People's accounts, their principals, sign-in sessions and the active Access Configuration.
-- These tables hold the present state that authentication reads on every request; what
-- happened to them (accounts made, principals refreshed, configurations activated, sessions
-- started and ended) is recorded as events in the same transaction, and the `access`
-- projection keeps it with validity intervals for reading it at any past moment.

-- A person's account: an origin (the identity provider that vouches for them) and their
-- subject there. Service accounts stay in service_accounts (origin "service").
CREATE TABLE person_accounts (
  id uuid PRIMARY KEY,
  origin text NOT NULL,
  subject text NOT NULL,
  name text NOT NULL,
  display_name text,
  dn text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (origin, subject)
);
CREATE INDEX person_accounts_name ON person_accounts (name);

-- The principals the account's identity provider last gave (group DNs, normalised, nested
-- groups resolved), when they were last confirmed, and when a refresh last failed.
-- `principal_count` is what the provider gave; above the ceiling the set is kept empty and
-- `over_limit` set, and every read and command of the account fails.
CREATE TABLE account_principals (
  account_id uuid PRIMARY KEY REFERENCES person_accounts (id),
  principals text[] NOT NULL,
  principal_count integer NOT NULL,
  over_limit boolean NOT NULL DEFAULT false,
  refreshed_at timestamptz NOT NULL,
  refresh_failed_at timestamptz
);

-- Sign-in sessions: credentials, not history. Only the SHA-256 digest of the cookie value
-- is stored; `id` is what the log and `annal sessions` name. Tokens of the provider (to
-- refresh principals) stay here, never in the log.
CREATE TABLE sessions (
  id uuid PRIMARY KEY,
  digest bytea NOT NULL UNIQUE,
  account_id uuid NOT NULL REFERENCES person_accounts (id),
  method text NOT NULL,
  address text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  ended_at timestamptz,
  end_reason text,
  provider_tokens jsonb
);
CREATE INDEX sessions_account ON sessions (account_id) WHERE ended_at IS NULL;

-- An OpenID Connect sign-in under way: the state's digest (one use: deleted when the
-- provider sends the browser back), the PKCE verifier and the nonce, for ten minutes.
CREATE TABLE sign_in_flows (
  state_digest bytea PRIMARY KEY,
  code_verifier text NOT NULL,
  nonce text NOT NULL,
  return_to text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Sign-in attempts per key (`address:<ip>`, `account:<origin>:<login>`) in fixed windows,
-- shared by every annal process on the database.
CREATE TABLE sign_in_attempts (
  key text PRIMARY KEY,
  window_start timestamptz NOT NULL,
  attempts integer NOT NULL
);

-- The active Access Configuration (one row, or none when none is active).
CREATE TABLE access_configuration (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  version integer NOT NULL,
  digest text NOT NULL,
  grants jsonb NOT NULL,
  activated_by text NOT NULL,
  activated_at timestamptz NOT NULL DEFAULT now()
);
