-- The demo's mail catcher ([messaging.demo]): every message the demo's SMTP transport hands to
-- it, kept so `annal mail` can show what was sent. Only the demo writes here.
CREATE TABLE demo_mail (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  received_at timestamptz NOT NULL DEFAULT now(),
  envelope_from text,
  envelope_to text[] NOT NULL,
  subject text,
  text_body text,
  html_body text,
  message_id text
);
