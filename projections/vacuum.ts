/**
 * Storage parameters of a projection's large tables of current state, rewritten as the
 * directory changes (`CREATE TABLE … WITH (…)`): autovacuum comes after 1% of their rows have
 * changed instead of PostgreSQL's 20%, which for `entry_values`' 30 million rows at a million
 * entries let 6 million dead rows pile up between vacuums (bench/RESULTS.md, the soak); rows
 * appended count as well (the versions' tables mostly grow), so that their pages are marked
 * all-visible for the index-only scans of searches at a moment.
 */
export const LARGE_TABLE_STORAGE = `WITH (
     autovacuum_vacuum_scale_factor = 0.01,
     autovacuum_vacuum_insert_scale_factor = 0.01,
     autovacuum_analyze_scale_factor = 0.02)`;
