"""The viewer's route through the gateway: the page is public, nothing else became so."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from ds_proxy.dev_token import DEV_TOKEN_PATH
from gateway_stack import ADMIN, GatewayStack, bearer, tag, unique

if TYPE_CHECKING:
    import httpx

PAGE_FILES = ["/ui/", "/ui/index.html", "/ui/js/main.js", "/ui/viewer.css"]


@pytest.mark.parametrize("path", PAGE_FILES)
def test_the_page_needs_no_token(client: httpx.Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert client.head(path).status_code == 200


def test_what_the_page_fetches_still_needs_a_token(client: httpx.Client) -> None:
    bucket = unique("view")
    assert client.put(f"/ds/{bucket}", headers=bearer(ADMIN)).status_code == 201
    for path in (f"/ds/{bucket}/streams", f"/ds/{bucket}", "/v1/stream/x/y"):
        assert client.get(path).status_code == 401, path
    assert client.get(f"/ds/{bucket}/streams", headers=bearer(ADMIN)).status_code == 200


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_only_reading_the_page_is_exempt(
    stack: GatewayStack, client: httpx.Client, method: str
) -> None:
    request_id, headers = tag()
    response = client.request(method, "/ui/index.html", headers=headers)
    assert response.status_code == 401
    assert not stack.reached_server(request_id)


@pytest.mark.parametrize(
    "path", ["/ui/../ds/sessions/streams", "/ui/%2e%2e/v1/stream/x/y", "/uix", "/ui-other/x"]
)
def test_paths_that_leave_ui_need_a_token(
    stack: GatewayStack, client: httpx.Client, path: str
) -> None:
    request_id, headers = tag()
    # httpx would resolve the dot segments itself: send the path as written.
    request = client.build_request("GET", stack.url, headers=headers)
    request.url = request.url.copy_with(raw_path=path.encode())
    response = client.send(request)
    assert response.status_code == 401
    assert not stack.reached_server(request_id)


def test_without_make_dev_there_is_no_dev_token(stack: GatewayStack, client: httpx.Client) -> None:
    # This gateway runs the committed dev config as is: the path reaches ds-server, a 404.
    request_id, headers = tag()
    assert client.get(DEV_TOKEN_PATH, headers=headers).status_code == 404
    assert stack.reached_server(request_id)
