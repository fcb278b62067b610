"""Session snapshots (sessions.md §6): the fold, the job that publishes, and the check."""
