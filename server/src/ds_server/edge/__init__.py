"""The HTTP edge: what every request passes through, whichever handler serves it.

- ``surfaces``: the URL table (prefixes, reserved segments, route matching)
  that routing, authorization and the app all read;
- ``references``: how a header naming a stream (a fork source) becomes a name;
- ``http``: the request view, the one body reader, and the reply;
- ``errors``: domain and request errors to HTTP status, in one place.
"""
