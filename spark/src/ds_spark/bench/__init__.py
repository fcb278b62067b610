"""``make bench-spark``: analytics wall time and driver memory as events grow, beside pandas."""
