"""Session analytics (sessions.md §5): pure transforms, the job, the load and the report."""
