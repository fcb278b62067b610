"""A bearer token given as a string (``{PREFIX}TOKEN``) or as a file (``{PREFIX}TOKEN_FILE``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from pydantic import BaseModel, model_validator

if TYPE_CHECKING:
    from pathlib import Path

    from pydantic import SecretStr


class TokenOrFile(BaseModel):
    """Mixin of settings with the fields ``token`` and ``token_file``: at most one of them is
    set, and ``token_source`` is what the SDK's token providers take.

    The fields are declared by each settings class, in its own order and with its own
    descriptions (docs/configuration.md shows both).
    """

    if TYPE_CHECKING:
        token: SecretStr | None
        token_file: Path | None

    @model_validator(mode="after")
    def _one_token(self) -> Self:
        if self.token is not None and self.token_file is not None:
            prefix = str(self.model_config.get("env_prefix") or "")
            raise ValueError(f"set {prefix}TOKEN or {prefix}TOKEN_FILE, not both")
        return self

    @property
    def token_source(self) -> str | Path | None:
        """The bearer token: a file to read (again when it changes), a string, or none."""
        if self.token_file is not None:
            return self.token_file
        return None if self.token is None else self.token.get_secret_value()
