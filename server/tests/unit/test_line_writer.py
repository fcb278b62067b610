"""The request log's writer thread: order, whole lines per write on a pipe, a bounded backlog."""

from __future__ import annotations

import os
import select
import threading
from typing import TYPE_CHECKING

from ds_server.observability.line_writer import LineWriter

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def notice(dropped: int) -> bytes:
    return f"dropped {dropped}\n".encode()


def batch(first: int, count: int, width: int = 60) -> bytes:
    return b"".join(f"line {i}".ljust(width).encode() + b"\n" for i in range(first, first + count))


def test_batches_are_written_whole_and_in_order(tmp_path: Path) -> None:
    path = tmp_path / "log"
    with path.open("wb") as out:
        writer = LineWriter(out.fileno(), notice)
        for first in range(0, 5000, 100):
            writer.write(batch(first, 100), 100)
        assert writer.drain(timeout=30)
    assert path.read_bytes() == batch(0, 5000)


def test_what_the_descriptor_takes_at_once_is_written_without_the_thread(
    tmp_path: Path,
) -> None:
    read_end, write_end = os.pipe()
    with (tmp_path / "log").open("wb") as out:
        for fd in (out.fileno(), write_end):
            writer = LineWriter(fd, notice)
            writer.write(batch(0, 50), 50)
            # Written before write() returned, and no thread was needed for it.
            assert writer._thread is None
    assert (tmp_path / "log").read_bytes() == batch(0, 50)
    assert os.read(read_end, 65536) == batch(0, 50)
    os.close(read_end)
    os.close(write_end)


def test_on_a_pipe_each_write_is_whole_lines_of_at_most_pipe_buf(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read_end, write_end = os.pipe()
    writes: list[bytes] = []
    real_write = os.write

    def spy(fd: int, data: bytes | memoryview) -> int:
        if fd == write_end:
            writes.append(bytes(data))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", spy)
    received = bytearray()
    reader = threading.Thread(target=_read_all, args=(read_end, received))
    reader.start()
    data = batch(0, 1000) + b"x" * 10_000 + b"\n" + batch(1000, 10)
    writer = LineWriter(write_end, notice)
    writer.write(data, 1011)
    assert writer.drain(timeout=30)
    os.close(write_end)
    reader.join(timeout=30)
    os.close(read_end)
    assert bytes(received) == data
    assert all(chunk.endswith(b"\n") for chunk in writes)
    # Only the one line longer than PIPE_BUF is written in a write of its own above it.
    assert [len(c) for c in writes if len(c) > select.PIPE_BUF] == [10_001]


def test_past_the_backlog_batches_are_dropped_counted_and_said() -> None:
    read_end, write_end = os.pipe()
    # Fill the pipe, so the writer thread blocks as on a stderr nobody reads.
    os.set_blocking(write_end, False)
    filler = 0
    try:
        while True:
            filler += os.write(write_end, b"f" * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(write_end, True)
    writer = LineWriter(write_end, notice, max_backlog=10_000)
    waiting = batch(0, 100)  # 6,100 bytes: accepted, blocked in the thread
    writer.write(waiting, 100)
    writer.write(batch(100, 100), 100)  # would exceed 10,000 bytes: dropped
    writer.write(batch(200, 100), 100)  # dropped too
    assert not writer.drain(timeout=0.2)  # still blocked
    received = bytearray()
    reader = threading.Thread(target=_read_all, args=(read_end, received))
    reader.start()
    assert writer.drain(timeout=30)
    writer.write(batch(300, 10), 10)
    assert writer.drain(timeout=30)
    os.close(write_end)
    reader.join(timeout=30)
    os.close(read_end)
    assert bytes(received[filler:]) == waiting + notice(200) + batch(300, 10)


def _read_all(fd: int, into: bytearray) -> None:
    while chunk := os.read(fd, 65536):
        into += chunk
