"""The whole stack for development (``make dev``) and for the e2e suite, on one launcher."""

from __future__ import annotations

from ds_stack.dev.config import StackConfig, throwaway
from ds_stack.dev.stack import COMPONENTS, Reporter, Silent, Stack

__all__ = ["COMPONENTS", "Reporter", "Silent", "Stack", "StackConfig", "throwaway"]
