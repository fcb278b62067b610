"""Counters ds-sync keeps, rendered as Prometheus text."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class TableMetrics:
    """One mirrored table (Postgres → stream)."""

    state: str = "starting"  # starting, snapshot, streaming, refused, stopped
    changes: int = 0
    batches: int = 0
    duplicates: int = 0  # POSTs the server already had (204): resent after a restart
    resyncs: int = 0
    errors: int = 0
    lag_seconds: float = 0.0  # the last batch: its last commit → its delivery
    slot_wal_bytes: int | None = None  # WAL the native feed's slot holds


@dataclass(slots=True)
class Metrics:
    """Totals since start; gauges are read from the stream table when rendered."""

    events: int = 0
    transactions: int = 0
    batches: int = 0
    gaps: int = 0
    unstorable_payloads: int = 0
    conflicts: int = 0
    database_errors: int = 0
    server_errors: int = 0
    wakes: int = 0
    scans: int = 0
    skipped_streams: set[str] = field(default_factory=set)
    streams_by_state: dict[str, int] = field(default_factory=dict)
    tables: dict[str, TableMetrics] = field(default_factory=dict)

    def committed(self, *, group_size: int, rows: int) -> None:
        """One transaction carrying ``group_size`` batches and ``rows`` rows."""
        self.transactions += 1
        self.batches += group_size
        self.events += rows

    def render(self) -> str:
        """The Prometheus text exposition of every metric."""
        lines: list[str] = []
        counters = (
            ("ds_sync_events_total", "Messages committed to session_events", self.events),
            ("ds_sync_transactions_total", "Transactions committed", self.transactions),
            ("ds_sync_batches_total", "Read batches committed", self.batches),
            ("ds_sync_gaps_total", "410s recorded as gaps", self.gaps),
            (
                "ds_sync_unstorable_payloads_total",
                "Messages jsonb refused, stored as their text",
                self.unstorable_payloads,
            ),
            (
                "ds_sync_conflicts_total",
                "Unique-key conflicts (each stops a stream)",
                self.conflicts,
            ),
            (
                "ds_sync_database_errors_total",
                "Failed transactions (retried)",
                self.database_errors,
            ),
            (
                "ds_sync_server_errors_total",
                "Failed requests to ds-server (retried)",
                self.server_errors,
            ),
            ("ds_sync_wakes_total", "Pull-wake claims handled", self.wakes),
            ("ds_sync_scans_total", "Listings of the synced streams", self.scans),
        )
        for name, help_text, value in counters:
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} counter", f"{name} {value}"]
        name = "ds_sync_streams_skipped"
        lines += [f"# HELP {name} Matching streams not synced because they are not JSON"]
        lines += [f"# TYPE {name} gauge", f"{name} {len(self.skipped_streams)}"]
        name = "ds_sync_streams"
        lines += [f"# HELP {name} Synced streams by state", f"# TYPE {name} gauge"]
        for state, count in sorted(self.streams_by_state.items()):
            lines.append(f'{name}{{state="{state}"}} {count}')
        lines += self._render_tables()
        return "\n".join(lines) + "\n"

    def _render_tables(self) -> list[str]:
        lines: list[str] = []
        families = (
            ("ds_sync_table_changes_total", "counter", "Row changes delivered to pg-{table}"),
            ("ds_sync_table_batches_total", "counter", "Batches delivered to pg-{table}"),
            ("ds_sync_table_duplicates_total", "counter", "POSTs the server already had (204)"),
            ("ds_sync_table_resyncs_total", "counter", "Syncs of a table from scratch (reset)"),
            ("ds_sync_table_errors_total", "counter", "Failures of a table's sync (retried)"),
            ("ds_sync_table_lag_seconds", "gauge", "Last batch: its last commit to delivery"),
            ("ds_sync_slot_wal_bytes", "gauge", "WAL held by the native feed's slot"),
        )
        for name, kind, help_text in families:
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
            for table, figures in sorted(self.tables.items()):
                value = _table_figure(name, figures)
                if value is not None:
                    lines.append(f'{name}{{table="{table}"}} {value}')
        name = "ds_sync_tables"
        lines += [f"# HELP {name} Mirrored tables by state", f"# TYPE {name} gauge"]
        states: dict[str, int] = {}
        for figures in self.tables.values():
            states[figures.state] = states.get(figures.state, 0) + 1
        lines += [f'{name}{{state="{state}"}} {count}' for state, count in sorted(states.items())]
        return lines


def _table_figure(name: str, figures: TableMetrics) -> float | None:
    return {
        "ds_sync_table_changes_total": figures.changes,
        "ds_sync_table_batches_total": figures.batches,
        "ds_sync_table_duplicates_total": figures.duplicates,
        "ds_sync_table_resyncs_total": figures.resyncs,
        "ds_sync_table_errors_total": figures.errors,
        "ds_sync_table_lag_seconds": figures.lag_seconds,
        "ds_sync_slot_wal_bytes": figures.slot_wal_bytes,
    }[name]
