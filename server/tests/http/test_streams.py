"""PUT, POST, HEAD and DELETE on stream URLs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from ds_server.settings import LimitsSection

if TYPE_CHECKING:
    from collections.abc import Callable

    from litestar.testing import TestClient

PREFIX = "/v1/stream"
ZERO = "00000000000000000000"


def offset(position: int) -> str:
    return f"{position:020d}"


def put(client: TestClient[Any], path: str, body: bytes = b"", **headers: str) -> Any:
    return client.put(f"{PREFIX}/{path}", content=body, headers=_headers(headers))


def post(client: TestClient[Any], path: str, body: bytes = b"", **headers: str) -> Any:
    return client.post(f"{PREFIX}/{path}", content=body, headers=_headers(headers))


def _headers(values: dict[str, str]) -> dict[str, str]:
    return {name.replace("_", "-"): value for name, value in values.items()}


def body_of(client: TestClient[Any], path: str) -> bytes:
    response = client.get(f"{PREFIX}/{path}")
    assert response.status_code == 200
    content: bytes = response.content
    return content


# -- create ------------------------------------------------------------------


def test_create(client: TestClient[Any]) -> None:
    response = put(client, "chat/1", Content_Type="text/plain")
    assert response.status_code == 201
    assert response.headers["location"] == "http://testserver.local/v1/stream/chat/1"
    assert response.headers["content-type"] == "text/plain"
    assert response.headers["stream-next-offset"] == ZERO
    assert "stream-closed" not in response.headers


def test_create_location_drops_the_query(client: TestClient[Any]) -> None:
    response = client.put(f"{PREFIX}/a?x=1&offset=now")
    assert response.headers["location"] == "http://testserver.local/v1/stream/a"


def test_create_with_body(client: TestClient[Any]) -> None:
    response = put(client, "a", b"hello", Content_Type="text/plain")
    assert response.status_code == 201
    assert response.headers["stream-next-offset"] == offset(5)
    assert body_of(client, "a") == b"hello"


def test_create_default_content_type(client: TestClient[Any]) -> None:
    response = put(client, "a")
    assert response.status_code == 201
    assert response.headers["content-type"] == "application/octet-stream"


def test_create_is_idempotent(client: TestClient[Any]) -> None:
    put(client, "a", b"abc", Content_Type="text/plain")
    again = put(client, "a", Content_Type="text/plain")
    assert again.status_code == 200
    assert "location" not in again.headers
    assert again.headers["stream-next-offset"] == offset(3)


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": "application/json"},
        {"Content-Type": "text/plain", "Stream-TTL": "60"},
        {"Content-Type": "text/plain", "Stream-Closed": "true"},
    ],
)
def test_create_conflict(client: TestClient[Any], headers: dict[str, str]) -> None:
    put(client, "a", Content_Type="text/plain")
    assert client.put(f"{PREFIX}/a", headers=headers).status_code == 409


def test_create_closed(client: TestClient[Any]) -> None:
    response = put(client, "a", b"done", Content_Type="text/plain", Stream_Closed="true")
    assert response.status_code == 201
    assert response.headers["stream-closed"] == "true"
    assert response.headers["stream-next-offset"] == offset(4)
    assert put(client, "a", Content_Type="text/plain", Stream_Closed="TRUE").status_code == 200
    assert put(client, "a", Content_Type="text/plain").status_code == 409


def test_create_with_ttl(client: TestClient[Any]) -> None:
    response = put(client, "a", Stream_TTL="3600")
    assert response.status_code == 201
    assert response.headers["stream-ttl"] == "3600"
    assert client.head(f"{PREFIX}/a").headers["stream-ttl"] == "3600"


def test_create_with_expires_at(client: TestClient[Any]) -> None:
    response = put(client, "a", Stream_Expires_At="2099-01-02T05:04:05+02:00")
    assert response.status_code == 201
    assert response.headers["stream-expires-at"] == "2099-01-02T03:04:05.000Z"


@pytest.mark.parametrize(
    "headers",
    [
        {"Stream-TTL": "60", "Stream-Expires-At": "2099-01-01T00:00:00Z"},
        {"Stream-TTL": "+60"},
        {"Stream-TTL": "060"},
        {"Stream-TTL": "1e3"},
        {"Stream-TTL": ""},
        {"Stream-Expires-At": "tomorrow"},
        {"Stream-Expires-At": "2099-01-01T00:00:00"},
    ],
)
def test_create_rejects_bad_expiry(client: TestClient[Any], headers: dict[str, str]) -> None:
    assert client.put(f"{PREFIX}/a", headers=headers).status_code == 400
    assert client.head(f"{PREFIX}/a").status_code == 404


@pytest.mark.parametrize("expires_at", ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59"])
def test_create_with_extreme_expires_at_is_not_a_server_error(
    client: TestClient[Any], expires_at: str
) -> None:
    # Valid RFC 3339, but the instant in UTC falls outside years 1-9999.
    response = put(client, "a", Stream_Expires_At=expires_at)
    assert response.status_code in (201, 400)


def test_create_unicode_path(client: TestClient[Any]) -> None:
    response = client.put(f"{PREFIX}/caf\u00e9/\u65e5\u672c")
    assert response.status_code == 201
    location = response.headers["location"]
    assert location.isascii()
    assert client.head(location).status_code == 200


def test_create_path_with_undecodable_escape_is_not_a_server_error(
    client: TestClient[Any],
) -> None:
    # %ff is no UTF-8; servers decode it to U+FFFD.
    assert client.put(f"{PREFIX}/%ff").status_code in (201, 400)


def test_create_json_empty_array(client: TestClient[Any]) -> None:
    response = put(client, "j", b"[]", Content_Type="application/json")
    assert response.status_code == 201
    assert response.headers["stream-next-offset"] == ZERO
    assert body_of(client, "j") == b"[]"


def test_create_json_invalid(client: TestClient[Any]) -> None:
    assert put(client, "j", b"{nope", Content_Type="application/json").status_code == 400
    assert client.head(f"{PREFIX}/j").status_code == 404


@pytest.mark.parametrize("path", ["%2e%2e", "a/%2e/b", "a%00b", "a%0Ab", "a%7Fb", "x" * 1025])
def test_create_rejects_bad_paths(client: TestClient[Any], path: str) -> None:
    assert client.put(f"{PREFIX}/{path}").status_code == 400


def test_create_over_size_limit_creates_nothing(
    make_client: Callable[..., TestClient[Any]],
) -> None:
    client = make_client(limits=LimitsSection(max_stream_bytes=1024))
    assert put(client, "a", b"x" * 1025).status_code == 413
    assert client.head(f"{PREFIX}/a").status_code == 404
    assert put(client, "a", b"x" * 1024).status_code == 201


# -- append ------------------------------------------------------------------


def test_append(client: TestClient[Any]) -> None:
    put(client, "a", b"abc", Content_Type="text/plain")
    response = post(client, "a", b"def", Content_Type="text/plain")
    assert response.status_code == 204
    assert response.headers["stream-next-offset"] == offset(6)
    assert "stream-closed" not in response.headers
    assert body_of(client, "a") == b"abcdef"


def test_append_binary_is_byte_exact(client: TestClient[Any]) -> None:
    payload = bytes(range(256)) * 4
    put(client, "a")
    post(client, "a", payload, Content_Type="application/octet-stream")
    assert body_of(client, "a") == payload


def test_append_content_type_matches_media_type(client: TestClient[Any]) -> None:
    put(client, "a", Content_Type="text/plain")
    response = post(client, "a", b"x", Content_Type="Text/Plain; charset=utf-8")
    assert response.status_code == 204


def test_append_to_missing_stream(client: TestClient[Any]) -> None:
    assert post(client, "nope", b"x", Content_Type="text/plain").status_code == 404


def test_append_needs_a_body(client: TestClient[Any]) -> None:
    put(client, "a", Content_Type="text/plain")
    assert post(client, "a", Content_Type="text/plain").status_code == 400


def test_append_needs_a_content_type(client: TestClient[Any]) -> None:
    put(client, "a", Content_Type="text/plain")
    assert post(client, "a", b"x").status_code == 400


def test_append_content_type_mismatch(client: TestClient[Any]) -> None:
    put(client, "a", Content_Type="text/plain")
    assert post(client, "a", b"x", Content_Type="application/json").status_code in (400, 409)
    assert post(client, "a", b"x", Content_Type="text/html").status_code == 409
    assert body_of(client, "a") == b""


def test_append_json_flattens_one_level(client: TestClient[Any]) -> None:
    put(client, "j", Content_Type="application/json")
    assert post(client, "j", b"[[1,2], [3,4]]", Content_Type="application/json").status_code == 204
    assert post(client, "j", b'{"a": 1}', Content_Type="application/json").status_code == 204
    assert body_of(client, "j") == b'[[1,2],[3,4],{"a": 1}]'


@pytest.mark.parametrize("body", [b"[]", b"{", b"[1,]", b"NaN"])
def test_append_json_rejects(client: TestClient[Any], body: bytes) -> None:
    put(client, "j", Content_Type="application/json")
    assert post(client, "j", body, Content_Type="application/json").status_code == 400
    assert body_of(client, "j") == b"[]"


def test_append_over_size_limit_appends_nothing(
    make_client: Callable[..., TestClient[Any]],
) -> None:
    client = make_client(limits=LimitsSection(max_stream_bytes=1024))
    put(client, "a", b"x" * 1000)
    response = post(client, "a", b"y" * 25, Content_Type="application/octet-stream")
    assert response.status_code == 413
    head = client.head(f"{PREFIX}/a")
    assert head.headers["stream-next-offset"] == offset(1000)
    assert body_of(client, "a") == b"x" * 1000
    assert post(client, "a", b"y" * 24, Content_Type="application/octet-stream").status_code == 204


def test_append_body_bigger_than_the_limit(make_client: Callable[..., TestClient[Any]]) -> None:
    client = make_client(limits=LimitsSection(max_stream_bytes=1024))
    put(client, "a")
    response = post(client, "a", b"y" * 5000, Content_Type="application/octet-stream")
    assert response.status_code == 413
    assert client.head(f"{PREFIX}/a").headers["stream-next-offset"] == ZERO


# -- close -------------------------------------------------------------------


def test_close_only(client: TestClient[Any]) -> None:
    put(client, "a", b"abc", Content_Type="text/plain")
    response = post(client, "a", Stream_Closed="true")
    assert response.status_code == 204
    assert response.headers["stream-closed"] == "true"
    assert response.headers["stream-next-offset"] == offset(3)
    # Closing again is idempotent, with or without a stray Content-Type.
    again = post(client, "a", Stream_Closed="true", Content_Type="application/json")
    assert again.status_code == 204
    assert again.headers["stream-closed"] == "true"


def test_append_and_close(client: TestClient[Any]) -> None:
    put(client, "a", Content_Type="text/plain")
    response = post(client, "a", b"end", Content_Type="text/plain", Stream_Closed="true")
    assert response.status_code == 204
    assert response.headers["stream-closed"] == "true"
    assert response.headers["stream-next-offset"] == offset(3)


@pytest.mark.parametrize("closed_header", [None, "true"])
def test_append_to_closed_stream_is_409_with_final_offset(
    client: TestClient[Any], closed_header: str | None
) -> None:
    put(client, "a", b"abc", Content_Type="text/plain", Stream_Closed="true")
    headers = {"Content-Type": "text/plain"}
    if closed_header:
        headers["Stream-Closed"] = closed_header
    response = client.post(f"{PREFIX}/a", content=b"more", headers=headers)
    assert response.status_code == 409
    assert response.headers["stream-closed"] == "true"
    assert response.headers["stream-next-offset"] == offset(3)


def test_closed_is_reported_before_content_type_mismatch(client: TestClient[Any]) -> None:
    put(client, "a", Content_Type="text/plain", Stream_Closed="true")
    response = post(client, "a", b"x", Content_Type="text/html")
    assert response.status_code == 409
    assert response.headers["stream-closed"] == "true"


@pytest.mark.parametrize("value", ["false", "yes", "1", "", "True ", "truee"])
def test_only_true_closes(client: TestClient[Any], value: str) -> None:
    put(client, "a", Content_Type="text/plain")
    response = post(client, "a", b"x", Content_Type="text/plain", Stream_Closed=value)
    assert response.status_code == 204
    assert "stream-closed" not in response.headers
    assert "stream-closed" not in client.head(f"{PREFIX}/a").headers


@pytest.mark.parametrize("value", ["true", "TRUE", "True"])
def test_true_is_case_insensitive(client: TestClient[Any], value: str) -> None:
    put(client, "a", Content_Type="text/plain")
    assert post(client, "a", Stream_Closed=value).headers["stream-closed"] == "true"


# -- idempotent producers ----------------------------------------------------


def produce(
    client: TestClient[Any], body: bytes, epoch: int, seq: int, producer: str = "p", **extra: str
) -> Any:
    return post(
        client,
        "a",
        body,
        Content_Type="text/plain",
        Producer_Id=producer,
        Producer_Epoch=str(epoch),
        Producer_Seq=str(seq),
        **extra,
    )


def test_producer_append_is_200_with_echo(client: TestClient[Any]) -> None:
    put(client, "a", Content_Type="text/plain")
    response = produce(client, b"a", 0, 0)
    assert response.status_code == 200
    assert response.headers["producer-epoch"] == "0"
    assert response.headers["producer-seq"] == "0"
    assert response.headers["stream-next-offset"] == offset(1)


def test_producer_duplicate_is_204_and_not_written(client: TestClient[Any]) -> None:
    put(client, "a", Content_Type="text/plain")
    produce(client, b"a", 0, 0)
    produce(client, b"b", 0, 1)
    response = produce(client, b"a", 0, 0)
    assert response.status_code == 204
    assert response.headers["producer-epoch"] == "0"
    assert response.headers["producer-seq"] == "1"
    assert body_of(client, "a") == b"ab"


def test_producer_stale_epoch_is_403(client: TestClient[Any]) -> None:
    put(client, "a", Content_Type="text/plain")
    produce(client, b"a", 5, 0)
    response = produce(client, b"zombie", 4, 1)
    assert response.status_code == 403
    assert response.headers["producer-epoch"] == "5"


def test_producer_gap_is_409_with_expected_and_received(client: TestClient[Any]) -> None:
    put(client, "a", Content_Type="text/plain")
    produce(client, b"a", 0, 0)
    response = produce(client, b"c", 0, 2)
    assert response.status_code == 409
    assert response.headers["producer-expected-seq"] == "1"
    assert response.headers["producer-received-seq"] == "2"


def test_producer_new_epoch_must_start_at_zero(client: TestClient[Any]) -> None:
    put(client, "a", Content_Type="text/plain")
    produce(client, b"a", 0, 0)
    assert produce(client, b"b", 1, 1).status_code == 400
    assert produce(client, b"b", 1, 0).status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Producer-Id": "p"},
        {"Producer-Id": "p", "Producer-Epoch": "0"},
        {"Producer-Epoch": "0", "Producer-Seq": "0"},
        {"Producer-Id": "", "Producer-Epoch": "0", "Producer-Seq": "0"},
        {"Producer-Id": "p", "Producer-Epoch": "-1", "Producer-Seq": "0"},
        {"Producer-Id": "p", "Producer-Epoch": "0", "Producer-Seq": "1.5"},
        {"Producer-Id": "p", "Producer-Epoch": str(2**53), "Producer-Seq": "0"},
    ],
)
def test_producer_headers_malformed(client: TestClient[Any], headers: dict[str, str]) -> None:
    put(client, "a", Content_Type="text/plain")
    response = client.post(
        f"{PREFIX}/a", content=b"x", headers={"Content-Type": "text/plain", **headers}
    )
    assert response.status_code == 400
    assert body_of(client, "a") == b""


def test_producer_retry_of_closing_append(client: TestClient[Any]) -> None:
    put(client, "a", Content_Type="text/plain")
    assert produce(client, b"end", 0, 0, Stream_Closed="true").status_code == 200
    retry = produce(client, b"end", 0, 0, Stream_Closed="true")
    assert retry.status_code == 204
    assert retry.headers["stream-closed"] == "true"
    later = produce(client, b"more", 0, 1)
    assert later.status_code == 409
    assert later.headers["stream-closed"] == "true"


# -- Stream-Seq --------------------------------------------------------------


def test_stream_seq_regression_is_409(client: TestClient[Any]) -> None:
    put(client, "a", Content_Type="text/plain")
    assert post(client, "a", b"1", Content_Type="text/plain", Stream_Seq="b").status_code == 204
    assert post(client, "a", b"2", Content_Type="text/plain", Stream_Seq="b").status_code == 409
    assert post(client, "a", b"2", Content_Type="text/plain", Stream_Seq="a").status_code == 409
    assert post(client, "a", b"3", Content_Type="text/plain", Stream_Seq="c").status_code == 204
    assert body_of(client, "a") == b"13"


def test_stream_seq_is_per_writer(client: TestClient[Any]) -> None:
    put(client, "a", Content_Type="text/plain")
    post(client, "a", b"1", Content_Type="text/plain", Stream_Seq="5", X_JWT_Sub="alice")
    response = post(client, "a", b"2", Content_Type="text/plain", Stream_Seq="1", X_JWT_Sub="bob")
    assert response.status_code == 204


# -- HEAD --------------------------------------------------------------------


def test_head(client: TestClient[Any]) -> None:
    put(client, "a", b"abc", Content_Type="text/plain", Stream_TTL="60")
    response = client.head(f"{PREFIX}/a")
    assert response.status_code == 200
    assert response.content == b""
    assert response.headers["content-type"] == "text/plain"
    assert response.headers["stream-next-offset"] == offset(3)
    assert response.headers["stream-ttl"] == "60"
    assert response.headers["cache-control"] == "no-store"
    assert "stream-closed" not in response.headers


def test_head_closed(client: TestClient[Any]) -> None:
    put(client, "a", Stream_Closed="true")
    assert client.head(f"{PREFIX}/a").headers["stream-closed"] == "true"


def test_head_missing(client: TestClient[Any]) -> None:
    assert client.head(f"{PREFIX}/nope").status_code == 404


# -- DELETE ------------------------------------------------------------------


def test_delete(client: TestClient[Any]) -> None:
    put(client, "a", b"abc")
    response = client.delete(f"{PREFIX}/a")
    assert response.status_code == 204
    assert response.content == b""
    assert client.head(f"{PREFIX}/a").status_code == 404
    assert client.get(f"{PREFIX}/a").status_code == 404
    assert client.delete(f"{PREFIX}/a").status_code == 404


def test_delete_then_recreate(client: TestClient[Any]) -> None:
    put(client, "a", b"old", Content_Type="text/plain")
    client.delete(f"{PREFIX}/a")
    response = put(client, "a", Content_Type="application/json")
    assert response.status_code == 201
    assert body_of(client, "a") == b"[]"


# -- forks -------------------------------------------------------------------


def test_fork(client: TestClient[Any]) -> None:
    put(client, "src", b"abcdef", Content_Type="text/plain")
    response = put(client, "f", Stream_Forked_From=f"{PREFIX}/src", Stream_Fork_Offset=offset(3))
    assert response.status_code == 201
    assert response.headers["content-type"] == "text/plain"
    assert response.headers["stream-next-offset"] == offset(3)
    post(client, "f", b"XYZ", Content_Type="text/plain")
    assert body_of(client, "f") == b"abcXYZ"
    assert body_of(client, "src") == b"abcdef"


def test_fork_by_bare_path_and_legacy_offset(client: TestClient[Any]) -> None:
    put(client, "src", b"abcdef", Content_Type="text/plain")
    legacy = "0000000000000000_0000000000000002"
    response = put(client, "f", Stream_Forked_From="src", Stream_Fork_Offset=legacy)
    assert response.status_code == 201
    assert body_of(client, "f") == b"ab"


@pytest.mark.parametrize(
    "headers",
    [
        {"Stream-Fork-Offset": ZERO},
        {"Stream-Forked-From": "src", "Stream-Fork-Offset": "abc"},
        {"Stream-Forked-From": "src", "Stream-Fork-Offset": offset(99)},
        {"Stream-Forked-From": "src", "Stream-Fork-Sub-Offset": "1"},
        {"Stream-Forked-From": "src", "Stream-Fork-Offset": ZERO, "Stream-Fork-Sub-Offset": "-1"},
        {"Stream-Forked-From": "../src"},
        {"Stream-Forked-From": ""},
    ],
)
def test_fork_rejects(client: TestClient[Any], headers: dict[str, str]) -> None:
    put(client, "src", b"abcdef", Content_Type="text/plain")
    assert client.put(f"{PREFIX}/f", headers=headers).status_code == 400
    assert client.head(f"{PREFIX}/f").status_code == 404


def test_fork_of_missing_source(client: TestClient[Any]) -> None:
    assert put(client, "f", Stream_Forked_From="nope").status_code == 404


def test_deleted_source_with_forks_is_gone(client: TestClient[Any]) -> None:
    put(client, "src", b"abc", Content_Type="text/plain")
    put(client, "f", Stream_Forked_From="src")
    assert client.delete(f"{PREFIX}/src").status_code == 204
    assert client.get(f"{PREFIX}/src").status_code == 410
    assert client.head(f"{PREFIX}/src").status_code == 410
    assert body_of(client, "f") == b"abc"
    client.delete(f"{PREFIX}/f")
    assert client.get(f"{PREFIX}/src").status_code == 404
