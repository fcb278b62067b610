"""/ui/: the session viewer's files, their headers, and what the page's code may do."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING

import pytest
from ds_server.routes.viewer import CONTENT_SECURITY_POLICY, STATIC_DIR
from ds_server.settings import AuthSection, HttpSection

if TYPE_CHECKING:
    from collections.abc import Callable

    from conftest import Api

SCRIPTS = sorted(path.relative_to(STATIC_DIR).as_posix() for path in STATIC_DIR.rglob("*.js"))
FILES = ["index.html", "viewer.css", "favicon.svg", *SCRIPTS]


def test_the_page_and_its_files(api: Api) -> None:
    for name in FILES:
        response = api.client.get(f"/ui/{name}")
        assert response.status_code == 200, name
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["cache-control"] == "no-cache"
    types = {
        name: api.client.get(f"/ui/{name}").headers["content-type"]
        for name in ("index.html", "viewer.css", "js/main.js")
    }
    assert types["index.html"].startswith("text/html")
    assert types["viewer.css"].startswith("text/css")
    # A module script is refused (nosniff) unless served as JavaScript.
    assert re.match(r"(text|application)/javascript", types["js/main.js"])


@pytest.mark.parametrize("path", ["/ui/", "/ui"])
def test_the_index(api: Api, path: str) -> None:
    response = api.client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert response.content == (STATIC_DIR / "index.html").read_bytes()
    assert api.client.head(path).status_code == 200


def test_the_policy_allows_only_this_origin_and_no_inline_code() -> None:
    directives = dict(
        part.strip().split(" ", 1) for part in CONTENT_SECURITY_POLICY.split(";") if part.strip()
    )
    assert directives["default-src"] == "'none'"
    for name in ("script-src", "style-src", "connect-src", "img-src"):
        assert directives[name] == "'self'", name
    assert directives["frame-ancestors"] == "'none'"
    assert directives["base-uri"] == "'none'"
    assert "unsafe" not in CONTENT_SECURITY_POLICY


@pytest.mark.parametrize(
    "path", ["/ui/missing.js", "/ui/%2e%2e/routes/viewer.py", "/ui/js/../../settings.py"]
)
def test_nothing_else_is_served(api: Api, path: str) -> None:
    request = api.client.build_request("GET", path)
    request.url = request.url.copy_with(raw_path=path.encode())
    assert api.client.send(request).status_code == 404


def test_reading_the_page_needs_no_identity_in_gateway_mode(make_api: Callable[..., Api]) -> None:
    guarded = make_api(auth=AuthSection(mode="gateway"))
    assert guarded.client.get("/ui/").status_code == 200
    assert guarded.client.get("/ui/js/main.js").status_code == 200
    assert guarded.client.post("/ui/index.html").status_code == 401
    assert guarded.client.get("/ds/sessions/streams").status_code == 401


def test_the_viewer_can_be_turned_off(make_api: Callable[..., Api]) -> None:
    off = make_api(http=HttpSection(viewer=False))
    assert off.client.get("/ui/").status_code == 404
    assert off.client.get("/ui/js/main.js").status_code == 404


class _Markup(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.inline: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.inline += [name for name, _ in attrs if name.startswith("on") or name == "style"]
        if tag == "style":
            self.inline.append("<style>")
        if tag == "script":
            self.scripts.append(dict(attrs))
            self._in_script = True

    def handle_endtag(self, tag: str) -> None:
        self._in_script = self._in_script and tag != "script"

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline.append("inline script")


def test_the_page_has_no_inline_code() -> None:
    markup = _Markup()
    markup.feed((STATIC_DIR / "index.html").read_text(encoding="utf-8"))
    assert markup.inline == []
    assert markup.scripts == [{"type": "module", "src": "/ui/js/main.js"}]


# Ways to turn a string into markup, code or a URL to follow. Stream content
# reaches the page through textContent and data-* attributes only (render.js);
# the one link it builds is a #fragment.
_SINKS = re.compile(
    r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|"
    r"setAttribute\(\s*['\"]on|\.src\s*=|\.href\s*=(?!\s*`#)"
)


@pytest.mark.parametrize("name", SCRIPTS)
def test_the_scripts_never_build_markup_from_strings(name: str) -> None:
    assert _SINKS.findall((STATIC_DIR / name).read_text(encoding="utf-8")) == []
