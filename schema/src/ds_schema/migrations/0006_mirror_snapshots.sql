-- Compaction of pg-{table} (docs/sync.md): where each mirror's latest snapshot
-- is, and when ds-sync published it (the snapshot age it reports). The server's
-- HEAD is the truth about the offset; these only say since when.
ALTER TABLE sync_mirrors
    ADD COLUMN snapshot_offset text,
    ADD COLUMN snapshot_at timestamptz;
