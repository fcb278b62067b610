"""The protocol's vocabulary, in one place: offsets, headers, content types, URLs,
stream-name patterns, bucket listings, bootstrap bodies, JSON-mode framing and
pull-wake subscriptions.

Pure values and parsers, no I/O: what every client of the server (this SDK,
ds-sync, ds-spark, tests) says to it is spelled here once.
"""

from __future__ import annotations

from durable_sessions.protocol import headers
from durable_sessions.protocol.bootstrap import (
    NO_SNAPSHOT,
    Bootstrap,
    BootstrapFormatError,
    BootstrapReader,
    parse_bootstrap,
)
from durable_sessions.protocol.content_types import JSON, OCTET_STREAM, SSE, is_json, media_type
from durable_sessions.protocol.json_mode import JsonFramingError, json_batch, split_json_arrays
from durable_sessions.protocol.listing import (
    LISTING_PAGE_LIMIT,
    ListingFormatError,
    ListingPage,
    StreamInfo,
    parse_listing,
)
from durable_sessions.protocol.multipart import (
    MultipartError,
    PartReader,
    aiter_parts,
    boundary_of,
    iter_parts,
)
from durable_sessions.protocol.offsets import (
    BEGINNING,
    NOW,
    OFFSET_DIGITS,
    START,
    OffsetError,
    format_offset,
    is_offset,
    normal_offset,
    parse_offset,
)
from durable_sessions.protocol.patterns import (
    Pattern,
    PatternError,
    any_matches,
    parse_pattern,
    parse_patterns,
)
from durable_sessions.protocol.subscriptions import (
    ALREADY_CLAIMED,
    NO_PENDING_WORK,
    ClaimedStream,
    Grant,
    error_code,
)
from durable_sessions.protocol.urls import (
    BUCKET_PREFIX,
    STREAM_PREFIX,
    bootstrap_url,
    bootstrap_url_of,
    bucket_stream_url,
    bucket_url,
    listing_url,
    quote_path,
    snapshot_url,
    stream_url,
    subscription_url,
)

__all__ = [
    "ALREADY_CLAIMED",
    "BEGINNING",
    "BUCKET_PREFIX",
    "JSON",
    "LISTING_PAGE_LIMIT",
    "NOW",
    "NO_PENDING_WORK",
    "NO_SNAPSHOT",
    "OCTET_STREAM",
    "OFFSET_DIGITS",
    "SSE",
    "START",
    "STREAM_PREFIX",
    "Bootstrap",
    "BootstrapFormatError",
    "BootstrapReader",
    "ClaimedStream",
    "Grant",
    "JsonFramingError",
    "ListingFormatError",
    "ListingPage",
    "MultipartError",
    "OffsetError",
    "PartReader",
    "Pattern",
    "PatternError",
    "StreamInfo",
    "aiter_parts",
    "any_matches",
    "bootstrap_url",
    "bootstrap_url_of",
    "boundary_of",
    "bucket_stream_url",
    "bucket_url",
    "error_code",
    "format_offset",
    "headers",
    "is_json",
    "is_offset",
    "iter_parts",
    "json_batch",
    "listing_url",
    "media_type",
    "normal_offset",
    "parse_bootstrap",
    "parse_listing",
    "parse_offset",
    "parse_pattern",
    "parse_patterns",
    "quote_path",
    "snapshot_url",
    "split_json_arrays",
    "stream_url",
    "subscription_url",
]
