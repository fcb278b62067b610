-- Several ds-sync processes on one database (docs/sync.md, "Several processes").
--
-- Streams → Postgres: the session streams are divided into shards, each leased
-- to one process (the leases are ds-server pull-wake subscriptions). With every
-- renewal each process records here which shards it holds; the live ones are
-- those seen within a lease's TTL. It is how they share out the shards, and
-- what an operator reads to see who takes what.
CREATE TABLE sync_instances (
    consumer text NOT NULL,  -- DS_SYNC__NAME
    instance text NOT NULL,  -- DS_SYNC__INSTANCE, or {hostname}-{pid}
    shards integer[] NOT NULL DEFAULT '{}',
    started_at timestamptz NOT NULL DEFAULT now(),
    seen_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, instance)
);

-- Tables → streams: one process mirrors a table (it holds the table's advisory
-- lock); the others wait on the lock as standbys. The active one records
-- itself here when it takes over.
ALTER TABLE sync_mirrors
    ADD COLUMN active_instance text,
    ADD COLUMN active_since timestamptz,
    ADD COLUMN lock_key bigint;

-- Who holds each table's lock right now and who waits for it, from Postgres's
-- own lock table: a killed process's connection leaves it at once.
CREATE VIEW sync_mirror_instances AS
SELECT m.table_name,
       CASE WHEN l.granted THEN 'active' ELSE 'standby' END AS role,
       a.application_name,
       a.pid,
       a.client_addr,
       a.backend_start
FROM sync_mirrors m
JOIN pg_locks l
    ON l.locktype = 'advisory'
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid::bigint = (m.lock_key >> 32)
    AND l.objid::bigint = (m.lock_key & 4294967295)
    AND l.objsubid = 1
JOIN pg_stat_activity a ON a.pid = l.pid;
