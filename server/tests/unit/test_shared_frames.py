from __future__ import annotations

from ds_server.live import Change
from ds_server.routes._sse import SharedFrames
from ds_server.stores.base import Expiry, ReadResult, StreamInfo


def _result() -> ReadResult:
    info = StreamInfo("s1", "a", "text/plain", 5, False, Expiry(), None, 0.0)
    return ReadResult(info=info, start=0, next_offset=5, chunks=[b"hello"])


async def test_a_frame_is_shared_until_the_stream_changes() -> None:
    frames = SharedFrames()
    changed = Change()
    result = _result()
    frames.put("a", changed, 0, False, result, b"frame")

    assert frames.get("a", changed, 0, False) == (result, b"frame")
    assert frames.get("a", changed, 5, False) is None  # another position
    assert frames.get("a", changed, 0, True) is None  # another encoding
    assert frames.get("a", Change(), 0, False) is None  # a newer change
    changed.fire()
    assert frames.get("a", changed, 0, False) is None  # the stream changed since


async def test_a_frame_read_after_a_change_is_not_stored() -> None:
    frames = SharedFrames()
    changed = Change()
    changed.fire()
    frames.put("a", changed, 0, False, _result(), b"frame")
    assert frames.get("a", changed, 0, False) is None
