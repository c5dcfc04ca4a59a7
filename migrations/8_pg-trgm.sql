-- Trigram matching for substring filters (`co`, `ew`, LDAP `*x*`): the entries projection keeps
-- a GIN index of every case-folded attribute value with pg_trgm's operator class. pg_trgm is a
-- trusted extension shipped with PostgreSQL's contrib (and with the embedded server), so the
-- owner of the database may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
