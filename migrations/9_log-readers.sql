-- A log reader's transaction (a projection applying a batch) marks itself, and the log's safe
-- bound then no longer waits for it (src/store/log-order.ts, `markLogReader`). That is only
-- safe while such a transaction never appends: this trigger refuses an insert into `events`
-- from a transaction marked with `annal.log_reader`, once per statement.
CREATE FUNCTION annal_refuse_append_by_log_reader() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('annal.log_reader', true) = 'on' THEN
    RAISE EXCEPTION 'a log reader''s transaction may not append to the event log'
      USING ERRCODE = 'AN001',
            HINT = 'append in a transaction that did not call markLogReader';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER events_refuse_log_readers
  BEFORE INSERT ON events
  FOR EACH STATEMENT EXECUTE FUNCTION annal_refuse_append_by_log_reader();
