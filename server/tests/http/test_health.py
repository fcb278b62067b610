"""The liveness endpoint."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Api


def test_healthz(api: Api) -> None:
    response = api.client.get("/healthz")
    assert response.status_code == 200
    assert response.text == "ok\n"
    assert response.headers["content-type"].startswith("text/plain")


def test_healthz_carries_security_headers(api: Api) -> None:
    response = api.client.get("/healthz")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cross-origin-resource-policy"] == "cross-origin"


def test_healthz_only_answers_get(api: Api) -> None:
    assert api.client.post("/healthz").status_code == 405
