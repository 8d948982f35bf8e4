"""Golden sets: the team's own tasks, each with a way to check the answer (docs/golden-sets.md).

This module is the public API. `load_golden_set` turns a folder into a checked `GoldenSet`
or raises `GoldenSetError` naming every file, field and fix; nothing is read at import time.
"""

from .digest import digest_golden_set
from .errors import GoldenSetError, Problem
from .loader import discover_golden_sets, load_golden_set, validate_golden_set
from .models import (
    SCORER_KINDS,
    CommandScorer,
    ExactScorer,
    Expected,
    ExpectedToolCall,
    GoldenSet,
    HumanScorer,
    JsonScorer,
    Manifest,
    Message,
    RegexScorer,
    RunSettings,
    ScorerSpec,
    Task,
    TaskInput,
    ToolCallScorer,
)

__all__ = [
    "SCORER_KINDS",
    "CommandScorer",
    "ExactScorer",
    "Expected",
    "ExpectedToolCall",
    "GoldenSet",
    "GoldenSetError",
    "HumanScorer",
    "JsonScorer",
    "Manifest",
    "Message",
    "Problem",
    "RegexScorer",
    "RunSettings",
    "ScorerSpec",
    "Task",
    "TaskInput",
    "ToolCallScorer",
    "digest_golden_set",
    "discover_golden_sets",
    "load_golden_set",
    "validate_golden_set",
]
