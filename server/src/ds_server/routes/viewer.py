"""/ui/: the session viewer, static files under a strict Content-Security-Policy.

The page needs no token; everything it fetches does (the gateway exempts
only GET and HEAD below /ui/). Its scripts are files of their own, never
inline, so the policy can forbid inline script and ``eval`` outright.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from litestar import HttpMethod, route
from litestar.datastructures import CacheControlHeader
from litestar.response import File
from litestar.static_files import create_static_files_router

from ds_server.edge.surfaces import VIEWER_PREFIX

if TYPE_CHECKING:
    from litestar import Response, Router

STATIC_DIR = Path(__file__).resolve().parent.parent / "viewer"

# Same-origin scripts, styles, images and connections (fetch, EventSource);
# nothing else: no inline script or style, no eval, no plugins, no framing,
# no forms posting elsewhere, no <base> rewriting relative URLs.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    # The page's URL (its #session) is nobody else's business.
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


async def _harden(response: Response[object]) -> Response[object]:
    response.headers.update(_HEADERS)
    return response


# Litestar's html_mode serves the index to GET alone; HEAD is answered here too.
@route("/", http_method=[HttpMethod.GET, HttpMethod.HEAD], name="viewer/index")
async def _index() -> File:
    return File(
        STATIC_DIR / "index.html",
        media_type="text/html; charset=utf-8",
        content_disposition_type="inline",
    )


def viewer_router() -> Router:
    """GET/HEAD /ui/ (index.html) and the files beside it; revalidated on every load."""
    router = create_static_files_router(
        path=VIEWER_PREFIX,
        directories=[STATIC_DIR],
        name="viewer",
        after_request=_harden,
        cache_control=CacheControlHeader(no_cache=True),
    )
    router.register(_index)
    return router
