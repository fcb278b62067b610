"""Sessions: the event shapes of the sessions contract as a small typed API.

Writing (`AsyncSessionWriter`, `SessionWriter`): messages, streamed replies,
edits, deletes, reactions, presence and typing that expire when their
writer goes away (`durable_sessions.sessions.liveness`). Reading:
`SessionFollower` (typed events, live, from a bootstrap or an offset),
`load_session` and `SessionState` (the §6 fold, read as a chat). Forking:
`fork_session` (edit and regenerate).
"""

from __future__ import annotations

from durable_sessions.sessions.builders import (
    ROLES,
    STATUSES,
    Role,
    Status,
    change_event,
    chunk_event,
    deleted_message_event,
    message_event,
    presence_event,
    reaction_event,
    stopped_typing_event,
    typing_event,
)
from durable_sessions.sessions.events import (
    ChunkEvent,
    MessageEvent,
    PresenceEvent,
    ReactionEvent,
    SessionEvent,
    TypingEvent,
    parse_event,
)
from durable_sessions.sessions.fields import EventFields, Kind, fields_of, fields_of_json
from durable_sessions.sessions.fold import (
    SNAPSHOT_FORMAT,
    SnapshotFormatError,
    State,
    fold,
    snapshot_document,
    state_of_snapshot,
)
from durable_sessions.sessions.follower import SessionBatch, SessionFollower, load_session
from durable_sessions.sessions.fork import fork_session
from durable_sessions.sessions.keys import (
    ReactionKey,
    message_key,
    parse_reaction_key,
    reaction_key,
    user_key,
)
from durable_sessions.sessions.liveness import (
    EXPIRES_AT,
    PRESENCE_REFRESH,
    PRESENCE_TTL,
    TYPING_REFRESH,
    TYPING_TTL,
    is_expired,
)
from durable_sessions.sessions.location import DEFAULT_BUCKET, create_session, session_url
from durable_sessions.sessions.state import ChatMessage, Participant, SessionState
from durable_sessions.sessions.sync_writer import SessionWriter
from durable_sessions.sessions.timestamps import format_time, parse_time
from durable_sessions.sessions.writer import (
    AsyncSessionWriter,
    Reply,
    ReplyStream,
    new_message_id,
)

__all__ = [
    "DEFAULT_BUCKET",
    "EXPIRES_AT",
    "PRESENCE_REFRESH",
    "PRESENCE_TTL",
    "ROLES",
    "SNAPSHOT_FORMAT",
    "STATUSES",
    "TYPING_REFRESH",
    "TYPING_TTL",
    "AsyncSessionWriter",
    "ChatMessage",
    "ChunkEvent",
    "EventFields",
    "Kind",
    "MessageEvent",
    "Participant",
    "PresenceEvent",
    "ReactionEvent",
    "ReactionKey",
    "Reply",
    "ReplyStream",
    "Role",
    "SessionBatch",
    "SessionEvent",
    "SessionFollower",
    "SessionState",
    "SessionWriter",
    "SnapshotFormatError",
    "State",
    "Status",
    "TypingEvent",
    "change_event",
    "chunk_event",
    "create_session",
    "deleted_message_event",
    "fields_of",
    "fields_of_json",
    "fold",
    "fork_session",
    "format_time",
    "is_expired",
    "load_session",
    "message_event",
    "message_key",
    "new_message_id",
    "parse_event",
    "parse_reaction_key",
    "parse_time",
    "presence_event",
    "reaction_event",
    "reaction_key",
    "session_url",
    "snapshot_document",
    "state_of_snapshot",
    "stopped_typing_event",
    "typing_event",
    "user_key",
]
