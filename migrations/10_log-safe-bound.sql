-- The log's safe bound (src/store/log-order.ts, `belowSafeBound`) as a function, so that its
-- plan is made once per session rather than once per read: planning the query over
-- `pg_stat_activity` and `pg_locks` took 0.3 to 0.4 ms, as long as reading a page of 1,000
-- events itself. STABLE: it runs in the snapshot of the statement that calls it, which is the
-- snapshot that statement reads the log in. 1634627180 is `LOG_READER_LOCK` ("annl").
CREATE FUNCTION annal_log_safe_bound() RETURNS xid8
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN coalesce(
    (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
      WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity AS a
                         WHERE a.backend_xid = x::xid AND a.datname <> current_database())
        AND NOT EXISTS (SELECT 1 FROM pg_locks AS l
                         WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.granted
                           AND l.classid = 1634627180::oid
                           AND l.objid = x::xid::text::oid)),
    pg_snapshot_xmax(pg_current_snapshot()));
END
$$;
