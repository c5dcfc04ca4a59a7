-- How change capture's passes go, per source: read by /readyz and /metrics in any annal
-- process, written by the process that runs the pass.
CREATE TABLE capture_status (
  source text PRIMARY KEY,
  last_pass_at timestamptz NOT NULL,
  last_success_at timestamptz,
  consecutive_failures integer NOT NULL DEFAULT 0,
  last_error_code text,
  last_error_message text,
  last_error_at timestamptz
);
