from __future__ import annotations

import pytest
from ds_bench.throughput import parse_wrk

WRK_OK = """\
Running 2s test @ http://127.0.0.1:4996/v1/stream/w
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    28.49ms   54.38ms 494.28ms   94.28%
    Req/Sec     2.95k   718.13     4.24k    70.00%
  Latency Distribution
     50%   15.00ms
     75%   21.11ms
     90%   38.71ms
     99%  327.24ms
  5933 requests in 2.03s, 4.46MB read
Requests/sec:   2921.35
Transfer/sec:      2.20MB
"""


def test_parse_wrk_reads_rate_and_p99() -> None:
    assert parse_wrk(WRK_OK) == (2921.35, 327.24, 0)


@pytest.mark.parametrize(("text", "ms"), [("677.00us", 0.677), ("11.38ms", 11.38), ("1.20s", 1200)])
def test_parse_wrk_converts_units(text: str, ms: float) -> None:
    output = WRK_OK.replace("327.24ms", text)
    assert parse_wrk(output)[1] == pytest.approx(ms)


def test_parse_wrk_counts_failures() -> None:
    output = WRK_OK.replace(
        "Requests/sec:",
        "  Socket errors: connect 0, read 2, write 0, timeout 3\n"
        "  Non-2xx or 3xx responses: 4509\nRequests/sec:",
    )
    assert parse_wrk(output)[2] == 4514


def test_parse_wrk_rejects_other_output() -> None:
    with pytest.raises(RuntimeError, match="unexpected wrk output"):
        parse_wrk("unable to connect to 127.0.0.1:1 Connection refused\n")
