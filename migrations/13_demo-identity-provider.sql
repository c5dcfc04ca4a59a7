-- The demo OpenID provider's state ([auth.oidc.demo]): oidc-provider's grants, sessions and
-- tokens by model and id, so sign-ins and their refresh tokens survive a restart of annal, and
-- its signing key and cookie secret (model "_secrets"), so tokens it issued stay verifiable.
-- Only the demo writes here.
CREATE TABLE demo_oidc (
  model text NOT NULL,
  id text NOT NULL,
  payload jsonb NOT NULL,
  grant_id text,
  user_code text,
  uid text,
  expires_at timestamptz,
  PRIMARY KEY (model, id)
);
CREATE INDEX demo_oidc_grant ON demo_oidc (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX demo_oidc_uid ON demo_oidc (model, uid) WHERE uid IS NOT NULL;
CREATE INDEX demo_oidc_user_code ON demo_oidc (model, user_code) WHERE user_code IS NOT NULL;
