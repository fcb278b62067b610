"""Extensions 2 and 5: publishing, finding, reading and deleting snapshots; offsets in paths."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import pytest
from ext_helpers import JSON_TYPE, MAX_STREAM_BYTES, OCTET, offset, parse_bootstrap

if TYPE_CHECKING:
    from ext_helpers import Backend, Bucket


def _json_stream(bucket: Bucket, stream: str = "s") -> list[str]:
    """A JSON stream of three messages; the offset after each."""
    bucket.create_stream(stream, content_type=JSON_TYPE)
    return bucket.append_json(stream, {"op": "set", "v": 1}, {"op": "set", "v": 2}, {"v": 3})


# -- 2.1 offsets --------------------------------------------------------------


def test_offsets_order_the_same_as_text_and_as_numbers(bucket: Bucket) -> None:
    bucket.create_stream("s")
    offsets = [bucket.append("s", b"x" * size) for size in (1, 9, 90, 900, 9000, 90000)]
    assert offsets == sorted(offsets)
    assert [int(o) for o in offsets] == sorted(int(o) for o in offsets)
    assert all(len(o) == len(offsets[0]) for o in offsets)
    # Subtracting two offsets gives the payload bytes between them.
    assert int(offsets[-1]) - int(offsets[-2]) == 90000
    assert int(offsets[0]) - 0 == 1  # -1 counts as 0


def test_one_boundary_model_for_reads_snapshots_and_bootstrap(bucket: Bucket) -> None:
    messages = [{"i": index, "pad": "x" * index} for index in range(6)]
    bucket.create_stream("s", content_type=JSON_TYPE)
    boundaries = bucket.append_json("s", *messages)
    # Every boundary a write returned is a valid place to read from...
    for index, boundary in enumerate(boundaries):
        assert bucket.read_json("s", boundary)[0] == messages[index + 1 :]
    # ...and to publish a snapshot at; inside a message neither is.
    inside = offset(int(boundaries[2]) + 1)
    assert bucket.read("s", inside).status_code == 400
    assert bucket.publish("s", inside, b"").status_code == 400
    assert bucket.publish("s", boundaries[2], b"S").status_code == 204
    # Bootstrap's parts are the same messages, ending at the same boundaries.
    parts = parse_bootstrap(bucket.bootstrap("s"))[1:]
    ends = []
    position = int(boundaries[2])
    for part in parts:
        position += len(part.body)
        ends.append(offset(position))
    assert ends == boundaries[3:]


# -- 2.2 publish --------------------------------------------------------------


def test_publish_is_204(bucket: Bucket) -> None:
    offsets = _json_stream(bucket)
    response = bucket.publish("s", offsets[1], b'{"v":2}', JSON_TYPE)
    assert response.status_code == 204
    assert response.content == b""


@pytest.mark.parametrize("stream_type", [JSON_TYPE, OCTET])
def test_publish_off_a_message_boundary_is_400(bucket: Bucket, stream_type: str) -> None:
    bucket.create_stream("s", content_type=stream_type)
    body = b'{"a":"0123456789"}' if stream_type == JSON_TYPE else b"0123456789"
    end = bucket.append("s", body, content_type=stream_type)
    bucket.append("s", body, content_type=stream_type)
    for position in (1, int(end) - 1, int(end) + 1):
        assert bucket.publish("s", offset(position), b"").status_code == 400, position
    assert bucket.publish("s", end, b"").status_code == 204


@pytest.mark.parametrize(
    "text", ["abc", "-1", "now", "12", "0" * 21, "+0000000000000000001", "0000000000000000000x"]
)
def test_publish_with_a_malformed_offset_is_400(bucket: Bucket, text: str) -> None:
    bucket.create_stream("s", body=b"abc")
    assert bucket.publish("s", text, b"").status_code == 400


def test_publish_on_a_missing_stream_is_404(bucket: Bucket) -> None:
    assert bucket.publish("missing", offset(0), b"").status_code == 404


def test_publish_beyond_the_tail_is_409(bucket: Bucket) -> None:
    offsets = _json_stream(bucket)
    beyond = offset(int(offsets[-1]) + 1)
    assert bucket.publish("s", beyond, b"").status_code == 409
    assert bucket.publish("s", offset(10**12), b"").status_code == 409
    assert bucket.publish("s", offsets[-1], b"").status_code == 204


def test_publish_older_than_the_earliest_retained_offset_is_410(bucket: Bucket) -> None:
    offsets = _json_stream(bucket)
    assert bucket.publish("s", offsets[1], b"second").status_code == 204
    assert bucket.publish("s", offsets[0], b"first").status_code == 410
    assert bucket.publish("s", offset(0), b"zero").status_code == 410
    # Publishing again at the earliest retained offset replaces the snapshot.
    assert bucket.publish("s", offsets[1], b"second again").status_code == 204


def test_publish_over_the_size_limit_is_413(bucket: Bucket) -> None:
    bucket.create_stream("s", body=b"abc")
    too_big = b"\0" * (MAX_STREAM_BYTES + 1)
    assert bucket.publish("s", offset(3), too_big).status_code == 413
    assert bucket.http.get(bucket.path("s", "/snapshot")).status_code == 404
    assert bucket.publish("s", offset(3), b"\0" * 1024).status_code == 204


@pytest.mark.parametrize(
    "content_type", ["application/x-crdt", "application/json", "text/plain; charset=utf-8"]
)
def test_snapshot_content_type_is_stored_and_returned(bucket: Bucket, content_type: str) -> None:
    bucket.create_stream("s", body=b"abc")
    assert bucket.publish("s", offset(3), b"blob", content_type).status_code == 204
    response = bucket.http.get(bucket.snapshot_path("s", offset(3)))
    assert response.headers["Content-Type"] == content_type
    assert response.content == b"blob"


def test_snapshot_content_type_defaults_to_octet_stream(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type="text/plain", body=b"abc")
    assert bucket.publish("s", offset(3), b"blob").status_code == 204
    response = bucket.http.get(bucket.snapshot_path("s", offset(3)))
    assert response.headers["Content-Type"] == OCTET


def test_a_new_snapshot_replaces_the_old_one_immediately(bucket: Bucket) -> None:
    offsets = _json_stream(bucket)
    assert bucket.publish("s", offsets[0], b"old").status_code == 204
    assert bucket.publish("s", offsets[2], b"new").status_code == 204
    latest = bucket.http.get(bucket.path("s", "/snapshot"))
    assert latest.status_code == 307
    assert latest.headers["Location"].endswith("/snapshot/" + offsets[2])
    assert bucket.http.get(bucket.snapshot_path("s", offsets[0])).status_code == 404
    assert bucket.http.get(bucket.snapshot_path("s", offsets[2])).content == b"new"


def test_an_empty_snapshot_at_offset_zero(bucket: Bucket) -> None:
    bucket.create_stream("s", body=b"abc")
    assert bucket.publish("s", offset(0), b"").status_code == 204
    response = bucket.http.get(bucket.snapshot_path("s", offset(0)))
    assert response.status_code == 200
    assert response.content == b""
    assert bucket.read_all("s", "-1") == (b"abc", offset(3))


# -- 2.3 latest snapshot -------------------------------------------------------


def test_latest_snapshot_is_a_307_to_its_resource(bucket: Bucket, server: Backend) -> None:
    offsets = _json_stream(bucket)
    assert bucket.publish("s", offsets[1], b"state", "application/x-state").status_code == 204
    response = bucket.http.get(bucket.path("s", "/snapshot"))
    assert response.status_code == 307
    location = response.headers["Location"]
    assert location == f"{server.url}/ds/{bucket.id}/s/snapshot/{offsets[1]}"
    followed = bucket.http.get(location)
    assert followed.status_code == 200
    assert followed.content == b"state"
    assert followed.headers["Content-Type"] == "application/x-state"


def test_latest_snapshot_is_404_without_one(bucket: Bucket) -> None:
    bucket.create_stream("s", body=b"abc")
    assert bucket.http.get(bucket.path("s", "/snapshot")).status_code == 404
    assert bucket.http.get(bucket.path("missing", "/snapshot")).status_code == 404


# -- 2.4 HEAD -------------------------------------------------------------------


def test_head_snapshot_offset_matches_the_redirect(bucket: Bucket) -> None:
    offsets = _json_stream(bucket)
    assert "Stream-Snapshot-Offset" not in bucket.http.head(bucket.path("s")).headers
    for snapshot_offset in (offsets[0], offsets[2]):
        assert bucket.publish("s", snapshot_offset, b"s").status_code == 204
        head = bucket.http.head(bucket.path("s")).headers["Stream-Snapshot-Offset"]
        location = bucket.http.get(bucket.path("s", "/snapshot")).headers["Location"]
        target = unquote(urlsplit(location).path.rsplit("/", 1)[1])
        assert head == target == snapshot_offset


# -- 2.5 read -------------------------------------------------------------------


def test_read_snapshot_headers(bucket: Bucket) -> None:
    offsets = _json_stream(bucket)
    assert bucket.publish("s", offsets[1], b"blob", "application/x-crdt").status_code == 204
    response = bucket.http.get(bucket.snapshot_path("s", offsets[1]))
    assert response.status_code == 200
    assert response.content == b"blob"
    assert response.headers["Content-Type"] == "application/x-crdt"
    assert response.headers["Stream-Snapshot-Offset"] == offsets[1]
    assert response.headers["Stream-Next-Offset"] == offsets[1]
    # Updates exist beyond the snapshot: it is not up to date.
    assert response.headers["Stream-Up-To-Date"] == "false"


def test_read_snapshot_at_the_tail_is_up_to_date(bucket: Bucket) -> None:
    offsets = _json_stream(bucket)
    assert bucket.publish("s", offsets[-1], b"all").status_code == 204
    response = bucket.http.get(bucket.snapshot_path("s", offsets[-1]))
    assert response.headers["Stream-Up-To-Date"] == "true"
    assert response.headers["Stream-Next-Offset"] == offsets[-1]


def test_read_unknown_snapshot_is_404(bucket: Bucket) -> None:
    offsets = _json_stream(bucket)
    assert bucket.http.get(bucket.snapshot_path("s", offsets[0])).status_code == 404
    assert bucket.publish("s", offsets[1], b"s").status_code == 204
    assert bucket.http.get(bucket.snapshot_path("s", offsets[2])).status_code == 404
    assert bucket.http.get(bucket.snapshot_path("missing", offsets[0])).status_code == 404


# -- 2.6 delete ----------------------------------------------------------------


def test_delete_latest_snapshot_is_409_and_keeps_it(bucket: Bucket) -> None:
    offsets = _json_stream(bucket)
    assert bucket.publish("s", offsets[1], b"s").status_code == 204
    assert bucket.http.delete(bucket.snapshot_path("s", offsets[1])).status_code == 409
    assert bucket.http.get(bucket.snapshot_path("s", offsets[1])).status_code == 200


def test_delete_superseded_or_unknown_snapshot_is_404(bucket: Bucket) -> None:
    offsets = _json_stream(bucket)
    assert bucket.http.delete(bucket.snapshot_path("s", offsets[0])).status_code == 404
    assert bucket.publish("s", offsets[0], b"old").status_code == 204
    assert bucket.publish("s", offsets[1], b"new").status_code == 204
    assert bucket.http.delete(bucket.snapshot_path("s", offsets[0])).status_code == 404
    assert bucket.http.delete(bucket.snapshot_path("s", offsets[2])).status_code == 404


def test_deleting_the_stream_drops_its_snapshot(bucket: Bucket) -> None:
    offsets = _json_stream(bucket)
    assert bucket.publish("s", offsets[1], b"s").status_code == 204
    assert bucket.http.delete(bucket.path("s")).status_code == 204
    bucket.create_stream("s", content_type=JSON_TYPE)
    assert "Stream-Snapshot-Offset" not in bucket.http.head(bucket.path("s")).headers
    assert bucket.http.get(bucket.path("s", "/snapshot")).status_code == 404
    assert bucket.read("s", "-1").status_code == 200
    assert bucket.bootstrap("s").headers["Stream-Snapshot-Offset"] == "-1"


# -- 5 URL encoding -------------------------------------------------------------


def test_percent_encoded_snapshot_offsets_are_decoded(bucket: Bucket) -> None:
    offsets = _json_stream(bucket)
    encoded = "".join(f"%{ord(char):02X}" for char in offsets[1])
    path = bucket.path("s", "/snapshot/" + encoded)
    assert bucket.http.put(path, content=b"enc").status_code == 204
    assert bucket.http.get(path).content == b"enc"
    assert bucket.http.get(bucket.snapshot_path("s", offsets[1])).content == b"enc"
    assert bucket.http.delete(path).status_code == 409
    location = bucket.http.get(bucket.path("s", "/snapshot")).headers["Location"]
    assert unquote(location.rsplit("/", 1)[1]) == offsets[1]
