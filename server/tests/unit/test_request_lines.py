"""Request log lines made in batches: the same lines ``logging`` made one at a time."""

from __future__ import annotations

import calendar
import json
import logging
import random
import re
import time

from ds_server.observability.log_format import TEXT_FORMAT, JsonFormatter
from ds_server.observability.request_lines import Entry, dropped_line, lines

GIVEN_ID = b"req-7"


def logging_record(entry: Entry, request_id: str) -> logging.LogRecord:
    """The record the access log handed to ``logging`` for ``entry`` before batching."""
    started, finished, method, path, status, _ = entry
    elapsed_ms = (finished - started) * 1000
    return logging.makeLogRecord(
        {
            "name": "ds_server.access",
            "levelno": logging.INFO,
            "levelname": "INFO",
            "msg": "%s %s %d %.1fms id=%s",
            "args": (method, path, status, elapsed_ms, request_id),
            "method": method,
            "path": path,
            "status": status,
            "duration_ms": round(elapsed_ms, 3),
            "request_id": request_id,
        }
    )


def test_a_text_line_is_the_line_logging_made() -> None:
    entry: Entry = (1.0, 1.0123456, "POST", "/v1/stream/a/b", 204, GIVEN_ID)
    expected = logging.Formatter(TEXT_FORMAT).format(logging_record(entry, "req-7"))
    assert lines([entry], "text") == expected + "\n"


def test_a_json_line_is_the_object_logging_made_with_the_same_keys_in_order() -> None:
    now = time.perf_counter()
    entry: Entry = (now - 0.0042, now, "PUT", "/v1/stream/é/b", 201, GIVEN_ID)
    made = lines([entry], "json")
    assert made.endswith("}\n")
    assert made.count("\n") == 1
    ours = json.loads(made)
    theirs = json.loads(JsonFormatter().format(logging_record(entry, "req-7")))
    assert list(ours) == list(theirs)
    assert {k: v for k, v in ours.items() if k != "time"} == {
        k: v for k, v in theirs.items() if k != "time"
    }
    # Not ASCII-escaped, as before (ensure_ascii=False).
    assert "/v1/stream/é/b" in made
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", ours["time"])
    stamp = calendar.timegm(time.strptime(ours["time"][:19], "%Y-%m-%dT%H:%M:%S"))
    assert abs(stamp - time.time()) < 5


def test_newlines_and_control_characters_are_escaped_in_both_formats() -> None:
    forged = "/v1/stream/x\nINFO ds_server.access GET /forged 200"
    entry: Entry = (0.0, 0.001, "GET", forged, 200, b"id\r\nINFO forged")
    for fmt in ("text", "json"):
        made = lines([entry], fmt)
        assert made.count("\n") == 1, made
    assert "x\\nINFO" in lines([entry], "text")
    assert json.loads(lines([entry], "json"))["request_id"] == "id\\r\\nINFO forged"


def test_a_long_request_id_is_cut() -> None:
    entry: Entry = (0.0, 0.001, "GET", "/healthz", 200, b"a" * 500)
    assert json.loads(lines([entry], "json"))["request_id"] == "a" * 128


def test_requests_without_an_id_get_distinct_ones_of_32_hex_digits() -> None:
    entries: list[Entry] = [(0.0, 0.001, "GET", "/healthz", 200, None)] * 1000
    ids = [json.loads(line)["request_id"] for line in lines(entries, "json").splitlines()]
    assert len(set(ids)) == 1000
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)


def test_lines_keep_the_order_of_the_entries() -> None:
    entries: list[Entry] = [
        (0.0, 0.001, "POST", f"/v1/stream/s{i}", 204, str(i).encode()) for i in range(500)
    ]
    for fmt in ("text", "json"):
        made = lines(entries, fmt).splitlines()
        assert [line.rsplit("id=", 1)[1].split('"')[0] for line in made] == [
            str(i) for i in range(500)
        ]


def test_the_dropped_line_says_how_many_in_each_format() -> None:
    assert dropped_line(12, "text").startswith("WARNING ds_server.access 12 request log lines")
    line = json.loads(dropped_line(12, "json"))
    assert (line["level"], line["logger"]) == ("warning", "ds_server.access")
    assert line["message"].startswith("12 request log lines dropped")


def test_durations_are_written_to_a_tenth_of_a_millisecond() -> None:
    for seconds in (0.0, 0.00004, 0.000151, 0.0123, 0.98761, 3.21, 9.99994, 12.345678, 4000.0):
        entry: Entry = (100.0, 100.0 + seconds, "GET", "/healthz", 200, GIVEN_ID)
        line = lines([entry], "text")
        assert f" 200 {seconds * 1000:.1f}ms id=req-7\n" in line, (seconds, line)


def test_one_path_with_several_methods_and_statuses_gets_each_its_own_start() -> None:
    # Starts are remembered by path: a path's other method or status must not reuse them.
    requests = [("POST", 204), ("GET", 200), ("POST", 204), ("POST", 409), ("HEAD", 200)] * 3
    entries: list[Entry] = [
        (0.0, 0.001, method, "/v1/stream/shared", status, GIVEN_ID) for method, status in requests
    ]
    made = lines(entries, "text").splitlines()
    assert made == [
        f"INFO ds_server.access {method} /v1/stream/shared {status} 1.0ms id=req-7"
        for method, status in requests
    ]


def test_durations_round_as_the_one_decimal_format_does() -> None:
    chosen = random.Random(29)
    for _ in range(5000):
        seconds = chosen.choice((1e-4, 1e-2, 1.0, 20.0)) * chosen.random()
        entry: Entry = (50.0, 50.0 + seconds, "GET", "/healthz", 200, GIVEN_ID)
        expected = f"{(entry[1] - entry[0]) * 1000:.1f}ms"
        assert f" 200 {expected} id=" in lines([entry], "text"), seconds
