"""What served each run, from the readings stored on it (`RunRecord.serving`), and the caveats
they give: a loaded file that could not be checked, serving settings that differ from the
catalogue's, a server that changed between a run's start and its resume, runs of one report
served with different settings (a confound), and rows served by different stacks, quantisations
or hardware (`stack_confound`: their Δ latency and Δ cost mix the stack and the model).

`ServingBlock` is the serving block every surface shows per model (stack and version, what was
loaded, quantisation, chat template, context, slots, threads, tool-call parser, hardware), each
fact marked when it is only what the catalogue states. `serving_block` is the one reader of the
stored dicts it comes from. Pure; every surface renders these values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from compare_tui.catalogue.provenance import VERIFIED, WEIGHTS_NOT_CHECKED
from compare_tui.catalogue.serving_check import catalogue_differences
from compare_tui.endpoint.account import ServingReading, StoredToolsReach, stored_readings
from compare_tui.endpoint.fingerprint import (
    LABELS,
    Difference,
    differences_text,
    fingerprint_differences,
    fingerprint_rows,
)
from compare_tui.report.caveats import Caveat
from compare_tui.store import RunRecord
from compare_tui.vocabulary import ModelKind, WeightsCheck

SHARED_SETTINGS = (
    "context_per_slot",
    "context_total",
    "slots",
    "template_mode",
    "tool_parser",
    "build",
    "engine_version",
    "threads",
)
"""Settings a comparison holds fixed across its models (the weights, their quantisation and
chat template belong to each model, so they may differ)."""


@dataclass(frozen=True, slots=True)
class ServerChange:
    """The server's settings changed between two starts of one run."""

    at: str
    """When the later reading was taken (the resume)."""
    differences: tuple[Difference, ...]


STATED = "stated, not checked"
"""How a fact the server does not report, taken from the catalogue's `[model.serving]`, is marked."""
STACK_CAVEAT = "Δ latency and Δ cost mix the serving stack and the model"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})


@dataclass(frozen=True, slots=True)
class ServingFact:
    """One line of a serving block."""

    label: str
    value: str
    checked: bool
    """True when the server reported it (or the run measured it); False when it is what the
    catalogue states (then `value` ends "(stated, not checked)") or nobody said."""


@dataclass(frozen=True, slots=True)
class ServingBlock:
    """What served one row, as every surface shows it (the report's serving section)."""

    label: str
    facts: tuple[ServingFact, ...]
    stack: str | None
    """The stack's name without its version (`llama.cpp llama-server`, `vLLM`), None unknown."""
    quantisation: str | None
    hardware: str | None
    shipped_template: bool
    """The chat template served is the one compare-tui ships (`local up`'s tool template)."""

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) in order: the one spelling every surface shows."""
        return [(f.label, f.value) for f in self.facts]


def _stated(value: Any) -> str | None:
    return None if value in (None, "") else f"{value} ({STATED})"


def _endpoint_host(entry: Mapping[str, Any]) -> str | None:
    try:
        return urlsplit(str(entry.get("endpoint") or "")).hostname
    except ValueError:
        return None


def _hardware(entry: Mapping[str, Any], environment: Mapping[str, Any], gpu: Mapping[str, Any] | None) -> str | None:
    """Where the model ran: this machine (its GPUs, else its CPU) for a server on loopback, the
    endpoint's host otherwise, the provider's for a hosted model."""
    if entry.get("kind") == ModelKind.HOSTED:
        return "the provider's"
    host = _endpoint_host(entry)
    if host is None:
        return None
    if host not in LOOPBACK:
        return f"the server at {host} (not described)"
    devices = (gpu or {}).get("devices")
    devices = devices if isinstance(devices, list) else []
    names = sorted({str(d.get("name")) for d in devices if isinstance(d, Mapping) and d.get("name")})
    if names:
        return f"{len(devices)} × {' + '.join(names)} (this machine)"
    cpu, cores = environment.get("cpu_model"), environment.get("cpu_count")
    if cpu or cores:
        return f"CPU {cpu or 'unknown model'}{f', {cores} cores' if cores else ''} (this machine)"
    return "this machine"


def serving_block(
    label: str,
    fingerprint: Mapping[str, Any],
    entry: Mapping[str, Any],
    environment: Mapping[str, Any],
    gpu: Mapping[str, Any] | None = None,
    prompt_cache: str | None = None,
) -> ServingBlock:
    """The serving block of one run from what it stored: the latest reading's fingerprint (what
    the server said), the catalogue entry recorded with the run (what the user stated) and the
    run's environment and GPU report (where it ran). The one reader of those dicts here.
    `prompt_cache`: the run's cache condition and share (`report.prompt_cache`), measured."""
    stated = entry.get("serving") or {}
    stated = stated if isinstance(stated, Mapping) else {}
    extra = stated.get("extra") or {}
    extra = extra if isinstance(extra, Mapping) else {}
    facts: list[ServingFact] = []

    def add(label: str, reported: Any, fallback: Any = None, missing: str = "not reported") -> None:
        if reported not in (None, ""):
            facts.append(ServingFact(label, str(reported), True))
        else:
            facts.append(ServingFact(label, _stated(fallback) or missing, False))

    stack = fingerprint.get("stack")
    vllm = str(stack or stated.get("stack") or "").startswith("vLLM")
    version = fingerprint.get("engine_version") or fingerprint.get("build")
    said_stack = " ".join(str(p) for p in (stack, version) if p) or None
    add("stack", said_stack, stated.get("stack"), "not reported (no serving account read)")
    add("loaded", fingerprint.get("loaded_file") or fingerprint.get("loaded_folder"))
    add("quantisation / dtype", fingerprint.get("quantisation"), stated.get("quantisation") or extra.get("dtype"))
    sha = fingerprint.get("chat_template_sha256")
    shipped = bool(extra.get("chat_template_file")) and (sha is None or sha == extra.get("chat_template_sha256"))
    name = stated.get("chat_template")
    if shipped:
        name = f"compare-tui's shipped {extra['chat_template_file']}"
    if sha and shipped:  # the server's template is the one `local up` recorded serving: compare-tui's
        add("chat template", f"{name}, sha256:{str(sha)[:12]}")
    elif sha:  # the digest is the server's; a name is only the catalogue's word
        add("chat template", f"sha256:{str(sha)[:12]}" + (f" (the catalogue calls it {name})" if name else ""))
    else:
        add("chat template", None, name)
    per_slot, slots = fingerprint.get("context_per_slot"), fingerprint.get("slots")
    if fingerprint.get("max_model_len"):
        add("context", f"{fingerprint['max_model_len']} (max model length)")
    elif per_slot:
        total = fingerprint.get("context_total")
        add("context", f"{per_slot} per slot" + (f" ({total} in all)" if total else ""))
    else:
        add("context", None, stated.get("context_size"))
    slots_missing = "not reported (vLLM does not expose --max-num-seqs)" if vllm else "not reported"
    add("slots", slots, extra.get("parallel_slots") or extra.get("max_num_seqs"), slots_missing)
    add("threads", fingerprint.get("threads"), extra.get("threads"))
    parser = fingerprint.get("tool_parser")
    if parser is None and fingerprint.get("template_mode") and not vllm and stack:
        parser = f"llama.cpp's own, from the template ({fingerprint['template_mode']})"
    parser_missing = "not stated (vLLM does not report its --tool-call-parser)" if vllm else "not reported"
    add("tool-call parser", parser, stated.get("tool_parser"), parser_missing)
    reach = StoredToolsReach.from_stored(environment.get("tools_reach"))
    if reach is not None:
        verdict = "yes" if reach.reached else "NO: its template drops them"
        add("tools in the prompt", f"{verdict} ({reach.how})")
    if prompt_cache is not None:
        add("prompt cache", prompt_cache)
    hardware = _hardware(entry, environment, gpu)
    add("hardware", hardware, missing="not recorded")
    quantisation = fingerprint.get("quantisation") or stated.get("quantisation") or extra.get("dtype")
    return ServingBlock(
        label=label,
        facts=tuple(facts),
        stack=str(stack or stated.get("stack") or "").split(" (")[0] or None,
        quantisation=str(quantisation) if quantisation else None,
        hardware=hardware,
        shipped_template=shipped,
    )


@dataclass(frozen=True, slots=True)
class ServingSummary:
    """What served one run, as its readings say."""

    run_id: str
    label: str
    fingerprint: Mapping[str, Any]
    """The latest reading's fingerprint (`{}` when none was read)."""
    rows: tuple[tuple[str, str], ...]
    """(label, readable value) of the fingerprint: what every surface shows."""
    loaded: Mapping[str, str] | None
    """The loaded-weights check (`status`, `text`), None when not recorded."""
    catalogue_differences: tuple[Difference, ...]
    changes: tuple[ServerChange, ...]
    unread: str | None
    """Why the server's account could not be read at the latest start, else None."""
    read: bool
    """Whether the run recorded any reading at all (runs before store v11 did not)."""
    block: ServingBlock | None = None
    """The serving block every surface shows for this run; None when the run read nothing
    (stored before store v11): no section rather than a column of "not reported"."""
    tools_dropped: str | None = None
    """How the server showed that its template drops the tools of the run's tool tasks
    (`engine.tools_reach`, recorded at the run's start), else None."""


def serving_summary(run: RunRecord, label: str, prompt_cache: str | None = None) -> ServingSummary:
    readings = stored_readings(run.serving)
    latest = readings[-1] if readings else ServingReading()
    fingerprint = latest.fingerprint
    changes = []
    for before, after in zip(readings, readings[1:], strict=False):
        diffs = fingerprint_differences(before.fingerprint, after.fingerprint)
        diffs = [d for d in diffs if d.key != "stack" or d.before is not None]
        if diffs and before.fingerprint and after.fingerprint:
            changes.append(ServerChange(after.captured_at or "?", tuple(diffs)))
    return ServingSummary(
        run_id=run.id,
        label=label,
        fingerprint=fingerprint,
        rows=tuple(fingerprint_rows(fingerprint)),
        loaded=latest.loaded,
        catalogue_differences=tuple(catalogue_differences(run.model_entry or {}, fingerprint)),
        changes=tuple(changes),
        unread=latest.unread,
        read=bool(readings),
        tools_dropped=_dropped((run.environment or {}).get("tools_reach")),
        block=serving_block(label, fingerprint, run.model_entry or {}, run.environment or {}, run.gpu, prompt_cache)
        if readings
        else None,
    )


def _dropped(stored: Any) -> str | None:
    reach = StoredToolsReach.from_stored(stored)
    if reach is not None and not reach.reached:
        return reach.how or "the server rendered the same prompt with and without them"
    return None


def serving_caveats(summary: ServingSummary, provenance: str) -> list[Caveat]:
    """One model's serving caveats, in a fixed order."""
    name, out = summary.label, []
    if summary.tools_dropped:
        out.append(
            Caveat(
                "tools_not_in_prompt",
                f"The tools of {name}'s tool tasks did not reach its prompt ({summary.tools_dropped}): its chat "
                "template drops them, so the model never saw them, and a task that expected a call measures the "
                "serving setup, not the model.",
            )
        )
    if summary.read and (provenance == VERIFIED or provenance in WEIGHTS_NOT_CHECKED):
        loaded = summary.loaded or {}
        if summary.unread or loaded.get("status") == WeightsCheck.UNCHECKED:
            why = loaded.get("text") or f"its account could not be read ({summary.unread})"
            # Runs before the label existed were labelled verified with this caveat alone.
            label = "is labelled verified because" if provenance == VERIFIED else f"is labelled “{provenance}”:"
            out.append(
                Caveat(
                    "loaded_unchecked",
                    f"{name} {label} its weights files on this machine match the "
                    f"pins, but the file the server loaded could not be checked: {why}.",
                )
            )
    if summary.catalogue_differences:
        out.append(
            Caveat(
                "serving_differs",
                f"{name}'s server reported other serving settings than its catalogue entry's "
                f"[model.serving] (catalogue → server): {differences_text(list(summary.catalogue_differences))}. "
                "Its figures hold for the server's settings; `compare-tui models verify "
                f"{summary.label}` offers the command that records them, and `run --strict-serving` refuses such runs.",
            )
        )
    for change in summary.changes:
        out.append(
            Caveat(
                "server_changed",
                f"{name}'s server changed during the run: at the resume of {change.at} "
                f"{differences_text(list(change.differences))}; attempts before and after were served "
                "differently.",
            )
        )
    return out


def serving_confound(summaries: Sequence[ServingSummary]) -> Caveat | None:
    """A caveat when the report's runs were served with different shared settings."""
    read = [s for s in summaries if s.fingerprint]
    parts = []
    for key in SHARED_SETTINGS:
        values: dict[str, list[str]] = {}
        for s in read:
            value = s.fingerprint.get(key)
            if value is not None:
                values.setdefault(str(value), []).append(s.label)
        if len(values) > 1:
            shown = "; ".join(f"{v} ({', '.join(labels)})" for v, labels in values.items())
            parts.append(f"{LABELS[key]}: {shown}")
    if not parts:
        return None
    return Caveat(
        "serving_confound",
        "Confound: the runs compared here were served with different settings, so a difference "
        f"between them may come from the serving rather than the model — {' | '.join(parts)}.",
    )


def stack_confound(summaries: Sequence[ServingSummary]) -> Caveat | None:
    """A caveat when the compared rows were served by different stacks, quantisations or
    hardware: then a Δ latency or Δ cost between them is not the model's alone."""
    # Only rows whose server gave an account: a hosted model's stack is nobody's to compare.
    blocks = [s.block for s in summaries if s.block is not None and s.fingerprint]
    parts = []
    for what, attribute in (("stack", "stack"), ("quantisation", "quantisation"), ("hardware", "hardware")):
        values: dict[str, list[str]] = {}
        for block in blocks:
            value = getattr(block, attribute)
            if value:
                values.setdefault(str(value), []).append(block.label)
        if len(values) > 1:
            parts.append(f"{what}: " + "; ".join(f"{v} ({', '.join(labels)})" for v, labels in values.items()))
    if not parts:
        return None
    return Caveat(
        "stack_confound",
        f"{STACK_CAVEAT}: the rows compared were served differently — {' | '.join(parts)}. "
        "Compare models on one stack, quantisation and machine to read a difference as the model's.",
    )


SECTION_TITLE = "Serving (what answered each model; “stated, not checked” is only the catalogue's word)"


def serving_lines(summaries: Sequence[ServingSummary]) -> list[str]:
    """The serving section as plain lines (terminal and TUI): each model, then its facts."""
    out = []
    for summary in summaries:
        if summary.block is None:
            continue
        out.append(summary.label)
        out += [f"  {label}: {value}" for label, value in summary.block.rows()]
    return out
