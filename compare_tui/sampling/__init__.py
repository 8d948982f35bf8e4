"""Golden sets from logged traffic: deterministic, recency-weighted, scrubbed, pinned.

This module is the public API. `sample_logs` streams JSONL chat logs (plain or gzip, told
apart by magic bytes) into a `SampledSet`; `write_sampled_set` writes it as a golden-set
folder (`golden.toml`, `tasks/*.json`) plus `sample.json`, which pins what was sampled.
No file is read at import time, and nothing here imports a UI library.

Accepted record shapes (one JSON object per line; see `records` for every field consulted):

1. plain: `{"request": {chat-completions body}, "response": chat completion | assistant
   message | string | {"status_code", "body"}, "timestamp", "conversation_id"}`;
2. OpenAI batch output: `{"custom_id", "response": {"status_code", "body"}, "error"}`, the
   request embedded as `request` or read from the batch input line with the same
   `custom_id` given among the logs (`{"custom_id", "method", "url", "body"}`);
3. LiteLLM-style: `{"messages", "response", "startTime", "model", "metadata", …}`.
Timestamps are ISO 8601 (no zone: UTC) or epoch seconds (above 1e11: milliseconds).

`sample_runs` samples whole agent runs instead (`runs`: every step a task with `trace`).
The sampling rule is in `selection`; redaction kinds in `redaction`; skip reasons in
`skips.REASONS`; the `sample.json` fields in `sampled`.
"""

from .chat import Reply, Skipped
from .errors import SamplingError
from .options import SampleOptions
from .pipeline import MAX_SAMPLES, sample_logs
from .records import LoggedTurn, read_record
from .redaction import KINDS as REDACTION_KINDS
from .redaction import Redactor
from .runs import check_run, run_id, sample_runs
from .sampled import SampledSet
from .selection import MAX_PER_CONVERSATION, PARTS
from .skips import REASONS as SKIP_REASONS
from .tasks import TEXT_SCORERS, TOOL_MATCHES
from .window import DEFAULT_WINDOW, parse_window
from .writer import write_sampled_set

__all__ = [
    "DEFAULT_WINDOW",
    "MAX_PER_CONVERSATION",
    "MAX_SAMPLES",
    "PARTS",
    "REDACTION_KINDS",
    "SKIP_REASONS",
    "TEXT_SCORERS",
    "TOOL_MATCHES",
    "LoggedTurn",
    "Redactor",
    "Reply",
    "SampleOptions",
    "SampledSet",
    "SamplingError",
    "Skipped",
    "check_run",
    "parse_window",
    "read_record",
    "run_id",
    "sample_logs",
    "sample_runs",
    "write_sampled_set",
]
