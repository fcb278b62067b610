"""PUT, POST, HEAD and DELETE on stream URLs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from ds_server.settings import LimitsSection

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx

    from conftest import Api

BASE_URL = "http://testserver.local"
ZERO = "00000000000000000000"
TEXT = {"Content_Type": "text/plain"}
JSON = {"Content_Type": "application/json"}
OCTETS = {"Content_Type": "application/octet-stream"}


def offset(position: int) -> str:
    return f"{position:020d}"


# -- create ------------------------------------------------------------------


def test_create(api: Api) -> None:
    response = api.put("chat/1", **TEXT)
    assert response.status_code == 201
    assert response.headers["location"] == BASE_URL + api.url("chat/1")
    assert response.headers["content-type"] == "text/plain"
    assert response.headers["stream-next-offset"] == ZERO
    assert "stream-closed" not in response.headers


def test_create_location_has_the_clients_scheme_behind_a_tls_gateway(api: Api) -> None:
    response = api.client.put(api.url("tls"), headers={"X-Forwarded-Proto": "https"})
    assert response.headers["location"] == "https://testserver.local" + api.url("tls")
    # Only http or https: anything else leaves the server's own scheme.
    other = api.client.put(api.url("odd"), headers={"X-Forwarded-Proto": "gopher"})
    assert other.headers["location"] == BASE_URL + api.url("odd")


def test_create_location_drops_the_query(api: Api) -> None:
    response = api.client.put(api.url("a", "x=1&offset=now"))
    assert response.headers["location"] == BASE_URL + api.url("a")


def test_create_with_body(api: Api) -> None:
    response = api.put("a", b"hello", **TEXT)
    assert response.status_code == 201
    assert response.headers["stream-next-offset"] == offset(5)
    assert api.body("a") == b"hello"


def test_create_default_content_type(api: Api) -> None:
    response = api.put("a")
    assert response.status_code == 201
    assert response.headers["content-type"] == "application/octet-stream"


def test_create_is_idempotent(api: Api) -> None:
    api.put("a", b"abc", **TEXT)
    again = api.put("a", **TEXT)
    assert again.status_code == 200
    assert "location" not in again.headers
    assert again.headers["stream-next-offset"] == offset(3)
    assert api.body("a") == b"abc"


@pytest.mark.parametrize(
    "headers",
    [
        {"Content_Type": "application/json"},
        {"Content_Type": "text/plain", "Stream_TTL": "60"},
        {"Content_Type": "text/plain", "Stream_Closed": "true"},
    ],
)
def test_create_conflict(api: Api, headers: dict[str, str]) -> None:
    api.put("a", **TEXT)
    assert api.put("a", **headers).status_code == 409


def test_create_closed(api: Api) -> None:
    response = api.put("a", b"done", **TEXT, Stream_Closed="true")
    assert response.status_code == 201
    assert response.headers["stream-closed"] == "true"
    assert response.headers["stream-next-offset"] == offset(4)
    assert api.put("a", **TEXT, Stream_Closed="TRUE").status_code == 200
    assert api.put("a", **TEXT).status_code == 409


def test_create_with_ttl(api: Api) -> None:
    response = api.put("a", Stream_TTL="3600")
    assert response.status_code == 201
    assert response.headers["stream-ttl"] == "3600"
    assert api.head("a").headers["stream-ttl"] == "3600"


def test_create_with_expires_at(api: Api) -> None:
    response = api.put("a", Stream_Expires_At="2099-01-02T05:04:05+02:00")
    assert response.status_code == 201
    assert response.headers["stream-expires-at"] == "2099-01-02T03:04:05.000Z"


@pytest.mark.parametrize(
    "headers",
    [
        {"Stream_TTL": "60", "Stream_Expires_At": "2099-01-01T00:00:00Z"},
        {"Stream_TTL": "+60"},
        {"Stream_TTL": "060"},
        {"Stream_TTL": "1e3"},
        {"Stream_TTL": ""},
        {"Stream_Expires_At": "tomorrow"},
        {"Stream_Expires_At": "2099-01-01T00:00:00"},
    ],
)
def test_create_rejects_bad_expiry(api: Api, headers: dict[str, str]) -> None:
    assert api.put("a", **headers).status_code == 400
    assert api.head("a").status_code == 404


@pytest.mark.parametrize("expires_at", ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59"])
def test_create_with_extreme_expires_at_is_not_a_server_error(api: Api, expires_at: str) -> None:
    # Valid RFC 3339, but the instant in UTC falls outside years 1-9999.
    assert api.put("a", Stream_Expires_At=expires_at).status_code in (201, 400)


def test_create_unicode_path(api: Api) -> None:
    response = api.put("caf\u00e9/\u65e5\u672c")
    assert response.status_code == 201
    location = response.headers["location"]
    assert location.isascii()
    assert api.client.head(location).status_code == 200


def test_create_path_with_undecodable_escape_is_not_a_server_error(api: Api) -> None:
    # %ff is no UTF-8; servers decode it to U+FFFD.
    assert api.client.put(api.url("%ff")).status_code in (201, 400)


def test_create_json_empty_array(api: Api) -> None:
    response = api.put("j", b"[]", **JSON)
    assert response.status_code == 201
    assert response.headers["stream-next-offset"] == ZERO
    assert api.body("j") == b"[]"


def test_create_json_invalid(api: Api) -> None:
    assert api.put("j", b"{nope", **JSON).status_code == 400
    assert api.head("j").status_code == 404


@pytest.mark.parametrize("path", ["%2e%2e", "a/%2e/b", "a%00b", "a%0Ab", "a%7Fb", "x" * 1025])
def test_create_rejects_bad_paths(api: Api, path: str) -> None:
    assert api.client.put(api.url(path)).status_code == 400


def test_create_over_size_limit_creates_nothing(make_api: Callable[..., Api]) -> None:
    api = make_api(limits=LimitsSection(max_retained_bytes=1024))
    assert api.put("a", b"x" * 1025).status_code == 413
    assert api.head("a").status_code == 404
    assert api.put("a", b"x" * 1024).status_code == 201


# -- append ------------------------------------------------------------------


def test_append(api: Api) -> None:
    api.put("a", b"abc", **TEXT)
    response = api.post("a", b"def", **TEXT)
    assert response.status_code == 204
    assert response.headers["stream-next-offset"] == offset(6)
    assert "stream-closed" not in response.headers
    assert api.body("a") == b"abcdef"


def test_append_binary_is_byte_exact(api: Api) -> None:
    payload = bytes(range(256)) * 4
    api.put("a")
    api.post("a", payload, **OCTETS)
    assert api.body("a") == payload


def test_append_content_type_matches_media_type(api: Api) -> None:
    api.put("a", **TEXT)
    assert api.post("a", b"x", Content_Type="Text/Plain; charset=utf-8").status_code == 204


def test_append_to_missing_stream(api: Api) -> None:
    assert api.post("nope", b"x", **TEXT).status_code == 404


def test_append_needs_a_body(api: Api) -> None:
    api.put("a", **TEXT)
    assert api.post("a", **TEXT).status_code == 400


def test_append_needs_a_content_type(api: Api) -> None:
    api.put("a", **TEXT)
    assert api.post("a", b"x").status_code == 400


def test_append_content_type_mismatch(api: Api) -> None:
    api.put("a", **TEXT)
    assert api.post("a", b"x", Content_Type="text/html").status_code == 409
    # A JSON body may be judged as JSON first; either way nothing is appended.
    assert api.post("a", b"x", **JSON).status_code in (400, 409)
    assert api.body("a") == b""


def test_append_json_flattens_one_level(api: Api) -> None:
    api.put("j", **JSON)
    assert api.post("j", b"[[1,2], [3,4]]", **JSON).status_code == 204
    assert api.post("j", b'{"a": 1}', **JSON).status_code == 204
    assert api.body("j") == b'[[1,2],[3,4],{"a": 1}]'


@pytest.mark.parametrize("body", [b"[]", b"{", b"[1,]", b"NaN"])
def test_append_json_rejects(api: Api, body: bytes) -> None:
    api.put("j", **JSON)
    assert api.post("j", body, **JSON).status_code == 400
    assert api.body("j") == b"[]"


DEEP = b"[" * 999 + b"]" * 999


def test_json_nested_too_deeply_is_400_with_the_reason(api: Api) -> None:
    """A body nested ~1,000 deep made the decoder raise RecursionError: a 500 before."""
    created = api.put("deep", DEEP, **JSON)
    assert created.status_code == 400
    assert "nested too deeply" in created.text
    assert api.head("deep").status_code == 404
    api.put("j", **JSON)
    appended = api.post("j", DEEP, **JSON)
    assert appended.status_code == 400
    assert "nested too deeply" in appended.text
    assert api.body("j") == b"[]"


def test_append_over_size_limit_appends_nothing(make_api: Callable[..., Api]) -> None:
    api = make_api(limits=LimitsSection(max_retained_bytes=1024))
    api.put("a", b"x" * 1000)
    assert api.post("a", b"y" * 25, **OCTETS).status_code == 413
    assert api.head("a").headers["stream-next-offset"] == offset(1000)
    assert api.body("a") == b"x" * 1000
    assert api.post("a", b"y" * 24, **OCTETS).status_code == 204
    # A body bigger than the whole limit is refused before it is read.
    api.put("b")
    assert api.post("b", b"z" * 5000, **OCTETS).status_code == 413
    assert api.head("b").headers["stream-next-offset"] == ZERO


# -- close -------------------------------------------------------------------


def test_close_only(api: Api) -> None:
    api.put("a", b"abc", **TEXT)
    response = api.post("a", Stream_Closed="true")
    assert response.status_code == 204
    assert response.headers["stream-closed"] == "true"
    assert response.headers["stream-next-offset"] == offset(3)
    # Closing again is idempotent, even with a stray Content-Type.
    again = api.post("a", Stream_Closed="true", **JSON)
    assert again.status_code == 204
    assert again.headers["stream-closed"] == "true"


def test_append_and_close(api: Api) -> None:
    api.put("a", **TEXT)
    response = api.post("a", b"end", **TEXT, Stream_Closed="true")
    assert response.status_code == 204
    assert response.headers["stream-closed"] == "true"
    assert response.headers["stream-next-offset"] == offset(3)


@pytest.mark.parametrize("closing", [False, True])
def test_append_to_closed_stream_is_409_with_final_offset(api: Api, closing: bool) -> None:
    api.put("a", b"abc", **TEXT, Stream_Closed="true")
    extra = {"Stream_Closed": "true"} if closing else {}
    response = api.post("a", b"more", **TEXT, **extra)
    assert response.status_code == 409
    assert response.headers["stream-closed"] == "true"
    assert response.headers["stream-next-offset"] == offset(3)


def test_closed_is_reported_before_content_type_mismatch(api: Api) -> None:
    api.put("a", **TEXT, Stream_Closed="true")
    response = api.post("a", b"x", Content_Type="text/html")
    assert response.status_code == 409
    assert response.headers["stream-closed"] == "true"


@pytest.mark.parametrize("value", ["false", "yes", "1", "", "truee"])
def test_only_true_closes(api: Api, value: str) -> None:
    api.put("a", **TEXT)
    response = api.post("a", b"x", **TEXT, Stream_Closed=value)
    assert response.status_code == 204
    assert "stream-closed" not in response.headers
    assert "stream-closed" not in api.head("a").headers


@pytest.mark.parametrize("value", ["true", "TRUE", "True"])
def test_true_is_case_insensitive(api: Api, value: str) -> None:
    api.put("a", **TEXT)
    assert api.post("a", Stream_Closed=value).headers["stream-closed"] == "true"


# -- idempotent producers ----------------------------------------------------


def produce(api: Api, body: bytes, epoch: int, seq: int, **extra: str) -> httpx.Response:
    return api.post(
        "a",
        body,
        **TEXT,
        Producer_Id="p",
        Producer_Epoch=str(epoch),
        Producer_Seq=str(seq),
        **extra,
    )


def test_producer_append_is_200_with_echo(api: Api) -> None:
    api.put("a", **TEXT)
    response = produce(api, b"a", 0, 0)
    assert response.status_code == 200
    assert response.headers["producer-epoch"] == "0"
    assert response.headers["producer-seq"] == "0"
    assert response.headers["stream-next-offset"] == offset(1)


def test_producer_duplicate_is_204_and_not_written(api: Api) -> None:
    api.put("a", **TEXT)
    produce(api, b"a", 0, 0)
    produce(api, b"b", 0, 1)
    response = produce(api, b"a", 0, 0)
    assert response.status_code == 204
    assert response.headers["producer-epoch"] == "0"
    assert response.headers["producer-seq"] == "1"
    assert api.body("a") == b"ab"


def test_producer_stale_epoch_is_403(api: Api) -> None:
    api.put("a", **TEXT)
    produce(api, b"a", 5, 0)
    response = produce(api, b"zombie", 4, 1)
    assert response.status_code == 403
    assert response.headers["producer-epoch"] == "5"


def test_producer_gap_is_409_with_expected_and_received(api: Api) -> None:
    api.put("a", **TEXT)
    produce(api, b"a", 0, 0)
    response = produce(api, b"c", 0, 2)
    assert response.status_code == 409
    assert response.headers["producer-expected-seq"] == "1"
    assert response.headers["producer-received-seq"] == "2"


def test_producer_new_epoch_must_start_at_zero(api: Api) -> None:
    api.put("a", **TEXT)
    produce(api, b"a", 0, 0)
    assert produce(api, b"b", 1, 1).status_code == 400
    assert produce(api, b"b", 1, 0).status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Producer_Id": "p"},
        {"Producer_Id": "p", "Producer_Epoch": "0"},
        {"Producer_Epoch": "0", "Producer_Seq": "0"},
        {"Producer_Id": "", "Producer_Epoch": "0", "Producer_Seq": "0"},
        {"Producer_Id": "p", "Producer_Epoch": "-1", "Producer_Seq": "0"},
        {"Producer_Id": "p", "Producer_Epoch": "0", "Producer_Seq": "1.5"},
        {"Producer_Id": "p", "Producer_Epoch": str(2**53), "Producer_Seq": "0"},
    ],
)
def test_producer_headers_malformed(api: Api, headers: dict[str, str]) -> None:
    api.put("a", **TEXT)
    assert api.post("a", b"x", **TEXT, **headers).status_code == 400
    assert api.body("a") == b""


def test_producer_retry_of_closing_append(api: Api) -> None:
    api.put("a", **TEXT)
    assert produce(api, b"end", 0, 0, Stream_Closed="true").status_code == 200
    retry = produce(api, b"end", 0, 0, Stream_Closed="true")
    assert retry.status_code == 204
    assert retry.headers["stream-closed"] == "true"
    later = produce(api, b"more", 0, 1)
    assert later.status_code == 409
    assert later.headers["stream-closed"] == "true"


# -- Stream-Seq --------------------------------------------------------------


def test_stream_seq_regression_is_409(api: Api) -> None:
    api.put("a", **TEXT)
    assert api.post("a", b"1", **TEXT, Stream_Seq="b").status_code == 204
    assert api.post("a", b"2", **TEXT, Stream_Seq="b").status_code == 409
    assert api.post("a", b"2", **TEXT, Stream_Seq="a").status_code == 409
    assert api.post("a", b"3", **TEXT, Stream_Seq="c").status_code == 204
    assert api.body("a") == b"13"


def test_stream_seq_is_per_writer(api: Api) -> None:
    api.put("a", **TEXT)
    api.post("a", b"1", **TEXT, Stream_Seq="5", X_JWT_Sub="alice")
    assert api.post("a", b"2", **TEXT, Stream_Seq="1", X_JWT_Sub="bob").status_code == 204


# -- HEAD --------------------------------------------------------------------


def test_head(api: Api) -> None:
    api.put("a", b"abc", **TEXT, Stream_TTL="60")
    response = api.head("a")
    assert response.status_code == 200
    assert response.content == b""
    assert response.headers["content-type"] == "text/plain"
    assert response.headers["stream-next-offset"] == offset(3)
    assert response.headers["stream-ttl"] == "60"
    assert response.headers["cache-control"] == "no-store"
    assert "stream-closed" not in response.headers


def test_head_closed(api: Api) -> None:
    api.put("a", Stream_Closed="true")
    assert api.head("a").headers["stream-closed"] == "true"


def test_head_missing(api: Api) -> None:
    assert api.head("nope").status_code == 404


# -- DELETE ------------------------------------------------------------------


def test_delete(api: Api) -> None:
    api.put("a", b"abc")
    response = api.delete("a")
    assert response.status_code == 204
    assert response.content == b""
    assert api.head("a").status_code == 404
    assert api.get("a").status_code == 404
    assert api.delete("a").status_code == 404


def test_delete_then_recreate(api: Api) -> None:
    api.put("a", b"old", **TEXT)
    api.delete("a")
    assert api.put("a", **JSON).status_code == 201
    assert api.body("a") == b"[]"


# -- forks -------------------------------------------------------------------


def test_fork(api: Api) -> None:
    api.put("src", b"abcdef", **TEXT)
    response = api.put(
        "f", Stream_Forked_From=f"/v1/stream/{api.name('src')}", Stream_Fork_Offset=offset(3)
    )
    assert response.status_code == 201
    assert response.headers["content-type"] == "text/plain"
    assert response.headers["stream-next-offset"] == offset(3)
    api.post("f", b"XYZ", **TEXT)
    assert api.body("f") == b"abcXYZ"
    assert api.body("src") == b"abcdef"


def test_fork_by_bare_name_and_legacy_offset(api: Api) -> None:
    api.put("src", b"abcdef", **TEXT)
    legacy = "0000000000000000_0000000000000002"
    response = api.put("f", Stream_Forked_From=api.name("src"), Stream_Fork_Offset=legacy)
    assert response.status_code == 201
    assert api.body("f") == b"ab"


@pytest.mark.parametrize(
    "headers",
    [
        {"Stream_Fork_Offset": ZERO},
        {"Stream_Forked_From": "{src}", "Stream_Fork_Offset": "abc"},
        {"Stream_Forked_From": "{src}", "Stream_Fork_Offset": offset(99)},
        {"Stream_Forked_From": "{src}", "Stream_Fork_Sub_Offset": "1"},
        {"Stream_Forked_From": "{src}", "Stream_Fork_Offset": ZERO, "Stream_Fork_Sub_Offset": "-1"},
        {"Stream_Forked_From": "../src"},
        {"Stream_Forked_From": ""},
    ],
)
def test_fork_rejects(api: Api, headers: dict[str, str]) -> None:
    api.put("src", b"abcdef", **TEXT)
    sent = {name: value.replace("{src}", api.name("src")) for name, value in headers.items()}
    assert api.put("f", **sent).status_code == 400
    assert api.head("f").status_code == 404


def test_fork_of_missing_source(api: Api) -> None:
    assert api.put("f", Stream_Forked_From=api.name("nope")).status_code == 404


def test_deleted_source_with_forks_is_gone(api: Api) -> None:
    api.put("src", b"abc", **TEXT)
    api.put("f", Stream_Forked_From=api.name("src"))
    assert api.delete("src").status_code == 204
    assert api.get("src").status_code == 410
    assert api.head("src").status_code == 410
    assert api.body("f") == b"abc"
    api.delete("f")
    assert api.get("src").status_code == 404
