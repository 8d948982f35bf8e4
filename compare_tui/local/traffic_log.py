"""The managed gateway's traffic log: a LiteLLM proxy callback shipped as package data.

`gateway up` copies this file beside the proxy's config and names its `handler` in
`litellm_settings.callbacks` (LiteLLM loads `<config dir>/<module>.py` by path). The proxy
then appends one JSON line per answered chat request to `$COMPARE_TUI_TRAFFIC_LOG`: when it
started and ended, the alias asked for (`model_group`), the deployment that answered
(`model_id`: compare-tui names each deployment `model_info.id` = its catalogue name), whether it
was a mirrored shadow copy (`is_silent_experiment`), the tokens and the call id, and the
messages, tools and answer **scrubbed by the sampler's redaction** (`sampling/redaction.py`,
loaded by path from `$COMPARE_TUI_REDACTION`, since the proxy's interpreter is LiteLLM's own and
does not have compare-tui installed) before anything is written. The line is LiteLLM-style, so
`compare-tui sample` reads it as it is.

No database is needed, and nothing here reaches the network. A line that cannot be written is
dropped with one warning on the proxy's log: a logging failure never fails a user's request.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
import types
from typing import Any

MODULE = "compare_tui_traffic"
"""The file name (without `.py`) `gateway up` gives the copy beside the config."""
CALLBACK = f"{MODULE}.handler"
"""What `litellm_settings.callbacks` names."""
LOG_ENV = "COMPARE_TUI_TRAFFIC_LOG"
REDACTION_ENV = "COMPARE_TUI_REDACTION"
REPLAYED_PARAMS = (
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "tool_choice",
    "response_format",
)
"""The request's sampling parameters kept on the line, so a replay asks for the same thing."""


def load_redactor_class() -> Any:
    """The sampler's `Redactor`: imported when compare-tui is installed here, else loaded from
    the file `$COMPARE_TUI_REDACTION` names (its one relative import, `SamplingError`, stood in
    by a plain exception: the callback never passes user rules, so it is never raised)."""
    try:
        from compare_tui.sampling.redaction import Redactor

        return Redactor
    except ImportError:
        return redactor_class_at(os.environ.get(REDACTION_ENV, ""))


def redactor_class_at(path: str) -> Any:
    """`Redactor` from the redaction module at `path`, without importing compare-tui."""
    package = types.ModuleType("_compare_tui_scrub")
    package.__path__ = [os.path.dirname(path)]
    errors = types.ModuleType("_compare_tui_scrub.errors")
    errors.SamplingError = type("SamplingError", (Exception,), {})  # type: ignore[attr-defined]
    sys.modules.update({"_compare_tui_scrub": package, "_compare_tui_scrub.errors": errors})
    spec = importlib.util.spec_from_file_location("_compare_tui_scrub.redaction", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"${REDACTION_ENV} names no redaction module ({path!r})")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.Redactor


def silent_copy(kwargs: Any) -> bool:
    """Whether LiteLLM sent this call as a mirrored copy (`silent_model`): it tags the call's
    own metadata `is_silent_experiment`, which the standard logging object does not carry."""
    if not isinstance(kwargs, dict):
        return False
    found = kwargs.get("litellm_params")
    params: dict[str, Any] = found if isinstance(found, dict) else {}
    for metadata in (kwargs.get("metadata"), params.get("metadata"), params.get("litellm_metadata")):
        if isinstance(metadata, dict) and metadata.get("is_silent_experiment"):
            return True
    return False


def traffic_record(payload: dict[str, Any], redactor: Any, *, silent: bool = False) -> dict[str, Any]:
    """One log line from LiteLLM's `standard_logging_object`: what the canary and `sample` read,
    every prompt and answer scrubbed. Pure apart from the redactor's counts."""
    metadata = payload.get("metadata") or {}
    params = payload.get("model_parameters") or {}
    hidden = payload.get("hidden_params") or {}
    record: dict[str, Any] = {
        "litellm_call_id": payload.get("litellm_call_id") or payload.get("id"),
        "startTime": payload.get("startTime"),
        "endTime": payload.get("endTime"),
        "model": payload.get("model_group") or payload.get("model"),
        "model_group": payload.get("model_group"),
        "model_id": payload.get("model_id") or (hidden.get("model_id") if isinstance(hidden, dict) else None),
        "is_silent_experiment": silent or bool(isinstance(metadata, dict) and metadata.get("is_silent_experiment")),
        "status": payload.get("status"),
        "prompt_tokens": payload.get("prompt_tokens"),
        "completion_tokens": payload.get("completion_tokens"),
        "response_cost": payload.get("response_cost"),
        "messages": redactor.value(payload.get("messages")),
        "response": redactor.value(payload.get("response")),
    }
    if isinstance(params, dict):
        if params.get("tools"):
            record["tools"] = redactor.value(params["tools"])
        kept = {k: params[k] for k in REPLAYED_PARAMS if params.get(k) is not None}
        if kept:
            record["model_parameters"] = redactor.value(kept)
    return record


try:  # inside the proxy: LiteLLM's base class, so the proxy calls the hooks below
    from litellm.integrations.custom_logger import CustomLogger as _Base  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # compare-tui's own interpreter (tests of the record), where LiteLLM is absent
    _Base = object


class TrafficLog(_Base):  # type: ignore[misc,valid-type,unused-ignore]
    """Appends one scrubbed line per answered request to the file `path` names."""

    def __init__(self, path: str | None = None) -> None:
        super().__init__()
        self.path = path if path is not None else os.environ.get(LOG_ENV, "")
        self._lock = threading.Lock()
        self._redactor_class = load_redactor_class()
        self._warned = False

    def write(self, payload: dict[str, Any], *, silent: bool = False) -> None:
        record = traffic_record(payload, self._redactor_class(), silent=silent)
        line = json.dumps(record, ensure_ascii=False, default=str)
        try:
            with self._lock, open(self.path, "a", encoding="utf-8") as sink:
                sink.write(line + "\n")
        except OSError as exc:
            if not self._warned:
                self._warned = True
                print(f"compare-tui traffic log: cannot append to {self.path!r} ({exc}); lines dropped", flush=True)

    async def async_log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        payload = kwargs.get("standard_logging_object") if isinstance(kwargs, dict) else None
        if isinstance(payload, dict):
            self.write(payload, silent=silent_copy(kwargs))

    def log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        # The silent (mirrored) copy runs in a thread through the synchronous path.
        payload = kwargs.get("standard_logging_object") if isinstance(kwargs, dict) else None
        if isinstance(payload, dict):
            self.write(payload, silent=silent_copy(kwargs))


handler = TrafficLog() if os.environ.get(LOG_ENV) else None
"""The instance LiteLLM's config names; only made inside the proxy (where the variable is set)."""
