"""Fork sources through the gateway: authorized exactly as the fork resolves them.

A request that names a second stream (``Stream-Forked-From``) must be
authorized for the stream the server will actually read, whichever surface
the request and the source are spelled on. These are the escapes seen
before authorization and the fork shared one resolver.
"""

from __future__ import annotations

import httpx
import pytest
from ds_proxy.tokens import bucket_token
from gateway_stack import ADMIN, GatewayStack, bearer, unique

TEXT = {"Content-Type": "text/plain"}


def _create(http: httpx.Client, path: str, body: bytes) -> None:
    response = http.put(path, headers={**bearer(ADMIN), **TEXT}, content=body)
    assert response.status_code == 201, response.text


def _read_all(http: httpx.Client, path: str, token: str) -> httpx.Response:
    return http.get(path, params={"offset": "-1"}, headers=bearer(token))


@pytest.fixture(scope="module")
def world(stack: GatewayStack) -> dict[str, str]:
    """Bucket ``chat`` (the token's), bucket ``other``, and a top-level stream ``secret``."""
    names = {"chat": unique("chat"), "other": unique("other"), "secret": unique("secret")}
    with httpx.Client(base_url=stack.url) as http:
        for bucket in (names["chat"], names["other"]):
            assert http.put(f"/ds/{bucket}", headers=bearer(ADMIN)).status_code == 201
        _create(http, f"/v1/stream/{names['secret']}", b"top-level secret")
        _create(http, f"/ds/{names['other']}/s", b"other's data")
        _create(http, f"/ds/{names['chat']}/r", b"chat's own r")
        # A stream in chat named like the top-level one: a bare source means this one.
        _create(http, f"/ds/{names['chat']}/{names['secret']}", b"chat's copy")
    return names


@pytest.fixture(scope="module")
def chat_token(world: dict[str, str]) -> str:
    return bucket_token("scoped", read=(world["chat"],), write=(world["chat"],))


class TestBareSourceOnTheBucketSurface:
    def test_names_a_stream_of_the_same_bucket_not_a_top_level_one(
        self, client: httpx.Client, world: dict[str, str], chat_token: str
    ) -> None:
        fork = f"/ds/{world['chat']}/{unique('f6')}"
        created = client.put(
            fork, headers={**bearer(chat_token), "Stream-Forked-From": world["secret"]}
        )
        assert created.status_code == 201, created.text
        read = _read_all(client, fork, chat_token)
        assert read.status_code == 200
        assert read.content == b"chat's copy"

    def test_forks_the_bucket_local_stream(
        self, client: httpx.Client, world: dict[str, str], chat_token: str
    ) -> None:
        fork = f"/ds/{world['chat']}/{unique('f10')}"
        created = client.put(fork, headers={**bearer(chat_token), "Stream-Forked-From": "r"})
        assert created.status_code == 201, created.text
        assert _read_all(client, fork, chat_token).content == b"chat's own r"

    def test_without_a_bucket_local_stream_of_that_name_it_is_404(
        self, client: httpx.Client, world: dict[str, str], chat_token: str
    ) -> None:
        fork = f"/ds/{world['chat']}/{unique('f')}"
        missing = unique("nowhere")
        response = client.put(fork, headers={**bearer(chat_token), "Stream-Forked-From": missing})
        assert response.status_code == 404

    @pytest.mark.parametrize("source", ["/{secret}", "{other}/s"])
    def test_a_path_that_is_not_absolute_is_refused(
        self, source: str, client: httpx.Client, world: dict[str, str], chat_token: str
    ) -> None:
        fork = f"/ds/{world['chat']}/{unique('f')}"
        header = source.format(**world)
        response = client.put(fork, headers={**bearer(chat_token), "Stream-Forked-From": header})
        assert response.status_code == 400


class TestAbsoluteSources:
    def test_a_top_level_stream_needs_read_on_its_bucket(
        self, client: httpx.Client, world: dict[str, str], chat_token: str
    ) -> None:
        fork = f"/ds/{world['chat']}/{unique('f')}"
        source = f"/v1/stream/{world['secret']}"
        response = client.put(fork, headers={**bearer(chat_token), "Stream-Forked-From": source})
        assert response.status_code == 403

    def test_a_ds_source_on_the_stream_surface_is_checked_against_its_bucket(
        self, client: httpx.Client, world: dict[str, str]
    ) -> None:
        # A token that may read a bucket literally named "ds" gains nothing.
        token = bucket_token("ds-reader", read=(world["chat"], "ds"), write=(world["chat"],))
        fork = f"/v1/stream/{world['chat']}/{unique('f7')}"
        source = f"/ds/{world['other']}/s"
        response = client.put(fork, headers={**bearer(token), "Stream-Forked-From": source})
        assert response.status_code == 403
        assert f"bucket {world['other']!r}" in response.text

    def test_a_ds_source_forks_when_its_bucket_is_readable(
        self, client: httpx.Client, world: dict[str, str]
    ) -> None:
        token = bucket_token("reader", read=(world["chat"], world["other"]), write=(world["chat"],))
        fork = f"/v1/stream/{world['chat']}/{unique('f7')}"
        source = f"/ds/{world['other']}/s"
        created = client.put(fork, headers={**bearer(token), "Stream-Forked-From": source})
        assert created.status_code == 201, created.text
        assert _read_all(client, fork, token).content == b"other's data"

    def test_percent_encoding_does_not_change_the_bucket_checked(
        self, client: httpx.Client, world: dict[str, str], chat_token: str
    ) -> None:
        fork = f"/v1/stream/{world['chat']}/{unique('f')}"
        encoded = "%2Fds%2F" + world["other"] + "%2Fs"
        response = client.put(fork, headers={**bearer(chat_token), "Stream-Forked-From": encoded})
        assert response.status_code == 403
