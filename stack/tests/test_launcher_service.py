"""``Service``: a ``with`` block starts it and stops it again, however the block ends."""

from __future__ import annotations

import pytest
from ds_stack.launcher import Service


class Recorded(Service):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def start(self) -> None:
        self.calls.append("start")

    def stop(self) -> None:
        self.calls.append("stop")


def test_with_starts_then_stops_and_hands_back_itself() -> None:
    service = Recorded()
    with service as entered:
        assert entered is service
        assert service.calls == ["start"]
    assert service.calls == ["start", "stop"]


def test_an_error_in_the_block_still_stops_it_and_propagates() -> None:
    service = Recorded()
    with pytest.raises(ValueError, match="boom"), service:
        raise ValueError("boom")
    assert service.calls == ["start", "stop"]


def test_start_and_stop_must_be_given() -> None:
    with pytest.raises(TypeError):
        Service()  # type: ignore[abstract]
