"""Caveats: everything the report could not establish, in plain words.

Each caveat is derived from the figures and inputs, never from the renderers, so every
surface lists the same ones in the same order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from compare_tui.endpoint.account import StoredIdentity
from compare_tui.report import gpu_words as fmt
from compare_tui.report.figures import ModelFigures
from compare_tui.report.inputs import ReportInputs, RunInput
from compare_tui.report.text_calls import caveat_texts
from compare_tui.vocabulary import GpuSource, ModelKind, RunStatus, plural

MARGIN_THRESHOLD = 0.05
"""Pass-rate interval half-widths at or above this (five points) get a margin-of-error caveat."""
_LISTED = 5


@dataclass(frozen=True, slots=True)
class Caveat:
    """One thing not established. `code` is stable (for tools); `text` is for people."""

    code: str
    text: str


def _verb(count: int, one: str, many: str) -> str:
    return one if count == 1 else many


def _listed(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:_LISTED])
    return shown + (f" and {len(ids) - _LISTED} more" if len(ids) > _LISTED else "")


def build_caveats(inputs: ReportInputs, rows: Sequence[ModelFigures]) -> tuple[Caveat, ...]:
    """Every caveat of a report over `rows` (the shown models), in a fixed order."""
    out = [Caveat("set", note) for note in inputs.notes]
    out += [Caveat("manifest", f"From the golden set: {text}") for text in inputs.manifest_caveats]
    out += [Caveat("skipped", f"{model} was not run: {reason}.") for model, reason in inputs.skipped.items()]
    digests = {r.run.goldset_digest for r in inputs.runs if r.run.goldset_digest}
    if len(digests) > 1:
        out.append(
            Caveat(
                "different_sets",
                "The runs did not all use the same golden set (their digests "
                "differ), so their figures are over different tasks or checks.",
            )
        )
    if rows:
        out.append(
            Caveat(
                "baseline",
                "A pass means the answer agreed with the golden set's expected "
                "outcome (your baseline, e.g. what production returns today), not that it is "
                "correct: baseline agreement is not ground truth.",
            )
        )
    by_run = {r.run.id: r for r in inputs.runs}
    out += grouped([(row.label, _row_caveats(row, by_run[row.run_id])) for row in rows])
    out += _gpu_sources(rows)
    bases = sorted({row.cost.basis for row in rows})
    if len(bases) > 1:
        hardware = ", ".join(r.label for r in rows if r.cost.basis == "hardware")
        priced = ", ".join(r.label for r in rows if r.cost.basis == "token_price")
        out.append(
            Caveat(
                "cost_bases",
                f"Costs are on different bases: {hardware} on amortised hardware time, "
                f"{priced} on a provider's token price. The two are not equivalent; compare "
                "them with care.",
            )
        )
    return tuple(out)


def _gpu_sources(rows: Sequence[ModelFigures]) -> list[Caveat]:
    """One caveat when the GPU figures shown were read in different places (NVML here, DCGM on
    a serving host, or two exporters): they are each right, but not of the same machine."""
    measured = [row for row in rows if row.gpu.measured]
    if len({(row.gpu.source, row.gpu.host) for row in measured}) < 2:
        return []
    each = "; ".join(f"{row.label} by {fmt.gpu_source(row.gpu)}" for row in measured)
    return [
        Caveat("gpu_sources", f"GPU memory was read in different places ({each}): each figure is of its own machine.")
    ]


def grouped(per_model: Sequence[tuple[str, list[Caveat]]]) -> list[Caveat]:
    """The models' caveats, one caveat for those that say the same thing of several models (the
    same code and the same words but for the name): "GPU memory of a and b was not measured: …"
    rather than one line each. In the order each first appears."""
    templates: dict[tuple[str, str], list[str]] = {}
    for label, found in per_model:
        for caveat in found:
            # The name (as a whole word) becomes a placeholder; a possessive stays one ("a's and b's").
            name = re.compile(rf"(?<![\w.-]){re.escape(label)}(?![\w-])")
            template = name.sub("\0", caveat.text)
            templates.setdefault((caveat.code, template), []).append(label)
    out = []
    for (code, template), labels in templates.items():
        names = _and(labels)
        if len(labels) > 1:  # names that are the subject: "a and b were served", not "was"
            for one, many in (("\0 was ", "\0 were "), ("\0 has ", "\0 have "), ("\0: ", "\0, each: ")):
                if template.startswith(one):
                    template = many + template.removeprefix(one)
        text = template.replace("\0's", _and([f"{n}'s" for n in labels])).replace("\0", names)
        out.append(Caveat(code, text))
    return out


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _row_caveats(row: ModelFigures, run_input: RunInput) -> list[Caveat]:
    name = row.label
    out = [*_incomplete(row, run_input), *_resumed(row, run_input), *_margin(row), *_people(row), *_errors(row)]
    out += [Caveat(code, text) for code, text in caveat_texts(name, row.text_calls)]
    out += _rescored(name, run_input)
    out += _sandbox(name, run_input)
    out += _serving(row, run_input)
    if row.tokens.note:
        out.append(Caveat("usage", f"{name}: {row.tokens.note}."))
    if row.cost.note and row.completed:
        out.append(Caveat("cost", f"Cost of {name}: {row.cost.note}."))
    return out


def _incomplete(row: ModelFigures, run_input: RunInput) -> list[Caveat]:
    """Tasks of the set not done: left out of every figure; how to finish them."""
    name, out = row.label, []
    counts = row.counts
    if counts.missing and row.run_status == RunStatus.SETTLED and not row.not_measured:
        out.append(
            Caveat(
                "not_sent",
                f"{name} was not sent {plural(counts.missing, 'task')} of the set: not sent (settled), "
                "never failures. Every verdict it served had settled (--stop-when-settled); they are left "
                "out of every figure. `compare-tui run --resume "
                f"{row.run_id} --full-set` sends them, and the fixed-N figures then stand beside the verdict.",
            )
        )
    elif counts.missing:
        why = ""
        if row.not_measured:
            classes = ", ".join(f"{cls} ×{n}" for cls, n in row.not_measured)
            why = (
                f"; {plural(sum(n for _, n in row.not_measured), 'attempt')} measured nothing because the "
                f"endpoint failed ({classes})"
            )
        if run_input.running is not None:  # a live executor is finishing it: no resume advice
            resume = f" The run is being executed now ({run_input.running}): report again when it ends."
        elif row.run_status != RunStatus.COMPLETED:
            resume = f" Resume the run to finish them: `compare-tui run --resume {row.run_id}`."
        else:
            resume = ""
        out.append(
            Caveat(
                "incomplete",
                f"{name} has {plural(counts.missing, 'task')} of the set not done "
                f"(run {row.run_status}{why}); they are left out of every figure, and of the "
                f"task-by-task comparison.{resume}",
            )
        )
    return out


def _resumed(row: ModelFigures, run_input: RunInput) -> list[Caveat]:
    """A run interrupted and resumed: its tasks ran in more than one session."""
    name, out = row.label, []
    resumes = (run_input.run.environment or {}).get("resumes") or []
    if resumes:
        times = f"{plural(len(resumes), 'time')}, last {resumes[-1][:16].replace('T', ' ')} UTC"
        paused = (
            " Its hardware cost counts the run's time from its first start to its end, the pauses included."
            if row.cost.basis == "hardware"
            else ""
        )
        out.append(
            Caveat(
                "resumed",
                f"{name}'s run {row.run_id} was interrupted and resumed ({times}): "
                f"its tasks ran in more than one session, on a server that may have restarted between them.{paused}",
            )
        )
    return out


def _margin(row: ModelFigures) -> list[Caveat]:
    """A pass rate whose 95% interval is wide: a small set's margin of error."""
    name, out = row.label, []
    interval = row.pass_rate.interval
    if interval is not None and interval.half_width >= MARGIN_THRESHOLD:
        out.append(
            Caveat(
                "margin",
                f"With {plural(row.pass_rate.scored, 'scored task')}, {name}'s pass rate could "
                f"be anywhere from {interval.low * 100:.1f} to {interval.high * 100:.1f} % (95% "
                f"interval, about ±{interval.half_width * 100:.0f} points): a small set's margin of error.",
            )
        )
    return out


def _people(row: ModelFigures) -> list[Caveat]:
    """What people decided: tasks scored by a person, verdicts that replaced the scorer's, reviews waiting."""
    name, out = row.label, []
    counts = row.counts
    if counts.human:
        out.append(
            Caveat(
                "human",
                f"{name}: {plural(counts.human, 'task')} scored by a person "
                f"({counts.human_decided} decided) {_verb(counts.human, 'is', 'are')} left out of the "
                "pass rate; the verdicts show in the blocks.",
            )
        )
    overrides = [b for b in row.blocks if b.overridden and not b.human]
    if overrides:
        changes = _listed([f"{b.task_id} {b.scorer_status} → {b.status}" for b in overrides])
        out.append(
            Caveat(
                "override",
                f"{name}: a person's verdict replaced the scorer's outcome of "
                f"{plural(len(overrides), 'scored task')} ({changes}); the blocks, counts, pass "
                "rate and paired figures use the person's verdict.",
            )
        )
    if row.awaiting_review:
        waiting = row.awaiting_review
        out.append(
            Caveat(
                "review",
                f"{name}: {plural(len(waiting), 'task')} still "
                f"{_verb(len(waiting), 'awaits', 'await')} a person's review ({_listed(waiting)}); "
                "confidence stays low until each has a pass or fail verdict.",
            )
        )
    return out


def _errors(row: ModelFigures) -> list[Caveat]:
    """Tasks that ended in error, by error class."""
    name, out = row.label, []
    counts = row.counts
    if counts.errored:
        classes = ", ".join(f"{cls} ×{n}" for cls, n in row.error_classes)
        out.append(
            Caveat(
                "errors",
                f"{name}: {plural(counts.errored, 'task')} ended in error (the scorer or "
                f"the request failed) and {_verb(counts.errored, 'counts', 'count')} as not passed. Errored "
                f"attempts by class: {classes}.",
            )
        )
    return out


def _rescored(name: str, run_input: RunInput) -> list[Caveat]:
    rescore = run_input.run.rescore
    if not rescore:
        return []
    generated = rescore.get("answers_generated") or {}
    moved = rescore.get("changed") or []
    changes = _listed([f"{c['task']} {c['from']} → {c['to']}" for c in moved]) if moved else "none"
    return [
        Caveat(
            "rescored",
            f"{name}: the answers were generated at {generated.get('started_at') or '?'} by run "
            f"{rescore.get('source_run')} and scored later, at {rescore.get('scored_at')}, with the set's "
            f"scorers as they are now (scorers {str(rescore.get('scorers_digest', ''))[:19]}…); no model was asked "
            f"again. Tasks whose outcome moved: {changes}.",
        )
    ]


def _sandbox(name: str, run_input: RunInput) -> list[Caveat]:
    isolations = [a.isolation for a in run_input.attempts if a.isolation]
    if not isolations:
        return []
    # `ran_on`: set by a scorer cluster (`--scorers ray`) on each result: the node it ran on.
    nodes = sorted({str(i["ran_on"]) for i in isolations if i.get("ran_on")})
    where, who = (
        (f" on a Ray cluster ({_listed(nodes)})", "the worker's user, with its")
        if nodes
        else ("", "this user, with this user's")
    )
    out = [
        Caveat(
            "sandbox",
            f"Command scorers for {name} ran{where} in a process sandbox, not a kernel sandbox: each "
            f"check runs as {who} file access.",
        )
    ]
    no_net = [i for i in isolations if not i.get("network_namespace")]
    if no_net:
        why = no_net[0].get("network_namespace_note") or "no reason recorded"
        out.append(
            Caveat(
                "sandbox_network",
                f"{plural(len(no_net), 'command check')} for {name} ran without a "
                f"network namespace, so the check could reach the network ({why}).",
            )
        )
    no_nproc = [i for i in isolations if not i.get("nproc_limit")]
    if no_nproc:
        why = no_nproc[0].get("nproc_note") or "no reason recorded"
        out.append(
            Caveat(
                "sandbox_nproc",
                f"The process-count limit was not in force for "
                f"{plural(len(no_nproc), 'command check')} of {name} ({why}).",
            )
        )
    return out


def _serving(row: ModelFigures, run_input: RunInput) -> list[Caveat]:
    name, out = row.label, []
    if row.model_kind == ModelKind.HOSTED:
        out.append(Caveat("network", f"Latency of {name} includes the network between this machine and its host."))
    elif row.model_kind == ModelKind.LOCAL:
        serving = run_input.run.model_entry.get("serving") or {}
        how = ", ".join(str(v) for v in (serving.get("stack"), serving.get("quantisation")) if v)
        where = f"the host of the DCGM exporter {row.gpu.host}" if row.gpu.source == GpuSource.DCGM else "this machine"
        out.append(
            Caveat(
                "hardware",
                f"{name} was served on {where}{f' ({how})' if how else ''}, which may "
                "not be your production hardware: its latency, GPU memory and hardware cost hold "
                f"for {'that' if row.gpu.source == GpuSource.DCGM else 'this'} machine and these serving settings only.",
            )
        )
    out += _gateway(name, run_input)
    gpu = row.gpu
    if gpu.applicable and not gpu.measured:
        out.append(Caveat("gpu", f"GPU memory of {name} was not measured: {gpu.reason or 'no reason was recorded'}."))
    elif gpu.measured:
        notes = "".join(f" {note}." for note in gpu.notes)
        out.append(
            Caveat(
                "gpu_scope",
                f"GPU memory of {name}: {fmt.gpu_line(gpu)}. It is the whole device's use (other "
                f"processes included), sampled periodically, so spikes between samples can be missed.{notes}",
            )
        )
    if gpu.kv_cache_peak is not None:
        out.append(
            Caveat(
                "kv_cache",
                f"vLLM's KV cache for {name} was at most {gpu.kv_cache_peak * 100:.1f} % full during the run "
                "(vllm:kv_cache_usage_perc on its /metrics): the share of the cache vLLM reserved at start-up, "
                "not GPU memory.",
            )
        )
    return out


def _gateway(name: str, run_input: RunInput) -> list[Caveat]:
    """What a gateway hid: the serving stack's own account (llama.cpp's `/props`, the `timings`
    in answers), and the upstream stack as the user stated it, labelled so."""
    entry = run_input.run.model_entry or {}
    gateway = entry.get("gateway")
    if not gateway:
        return []
    hidden = ["server timings in answers"]
    if StoredIdentity.of(run_input.run.environment).props is None:
        hidden.insert(0, "/props (build, chat template, context)")
    serving = entry.get("serving") or {}
    stated = ", ".join(
        f"{k}={serving[k]}"
        for k in ("stack", "quantisation", "chat_template", "tool_parser", "build")
        if serving.get(k)
    )
    upstream = (
        f"the upstream stack as stated in the catalogue: {stated} (stated, not verified)"
        if stated
        else "no upstream stack is stated; add it to the catalogue's [model.serving] (recorded as stated, not verified)"
    )
    return [
        Caveat(
            "gateway",
            f"{name} was reached through the {gateway} gateway, which hides the serving stack's "
            f"own account ({'; '.join(hidden)}), so serving facts were not read and the latency includes "
            f"the gateway; {upstream}.",
        )
    ]
