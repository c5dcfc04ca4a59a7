-- Why the last refresh of an account's principals failed (the provider's answer, or that it
-- could not be reached), for the message a refused command gives. Cleared by a refresh that works.
ALTER TABLE account_principals ADD COLUMN refresh_failure text;
