-- The log's safe bound (10_log-safe-bound.sql) skips autovacuum workers too. An autovacuum
-- worker that analyzes a table takes a transaction id to write the table's statistics, and
-- it never appends to the log; every reader of the log, the projections included, stopped
-- behind it for as long as it lasted. Matched by the xid of the worker's session, like the
-- other skips.
CREATE OR REPLACE FUNCTION annal_log_safe_bound() RETURNS xid8
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN coalesce(
    (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
      WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity AS a
                         WHERE a.backend_xid = x::xid
                           AND (a.datname <> current_database()
                                OR a.backend_type = 'autovacuum worker'))
        AND NOT EXISTS (SELECT 1 FROM pg_locks AS l
                         WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.granted
                           AND l.classid = 1634627180::oid
                           AND l.objid = x::xid::text::oid)),
    pg_snapshot_xmax(pg_current_snapshot()));
END
$$;
