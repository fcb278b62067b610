"""Benchmarks for ds-server: storage backends, start-up, and (later) the Node reference."""
