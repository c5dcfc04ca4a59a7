-- Writes annal makes to the directory on behalf of something it recorded (a change event's
-- processing, a GraphQL mutation), noted just before the write. When capture records the
-- resulting change it takes the note and links the change to its cause (metadata
-- causationId / correlationId): the audit trail answers "why did this entry change".
CREATE TABLE directory_write_intents (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  dn_norm text NOT NULL,
  actor_norm text NOT NULL,
  -- What the write does: "add", "delete", "modrdn:<new rdn>" or "modify:<op>:<attr>,...", so
  -- a note explains the change it was made for and not another one to the same entry.
  fingerprint text NOT NULL,
  causation_id text NOT NULL,
  correlation_id text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX directory_write_intents_target ON directory_write_intents (dn_norm, actor_norm, fingerprint, id);
