"""Spark DataSources for Durable Streams and the session analytics and snapshot jobs."""
