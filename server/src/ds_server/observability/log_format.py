"""How every log record is written: plain text lines, or one JSON object per line."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Literal

# Attributes every LogRecord has; anything else on a record came in ``extra``.
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}
# uvicorn adds its message again with terminal colour codes.
_SKIPPED = _STANDARD | {"color_message"}
TEXT_FORMAT = "%(levelname)s %(name)s %(message)s"


class JsonFormatter(logging.Formatter):
    """A record as one JSON object: time, level, logger, message, and its ``extra`` fields."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _SKIPPED and not key.startswith("_"):
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def configure_logging(level: str, fmt: Literal["text", "json"]) -> None:
    """Send every logger's records to stderr at ``level``, in ``fmt``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
