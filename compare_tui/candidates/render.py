"""The shortlist as text for 80 columns (`models list --for SET`): today's model, the mix, the
rule, then the candidates grouped by price, two lines each (figures, then how the price was
reached)."""

from __future__ import annotations

import textwrap

from compare_tui.candidates.measure import Quality
from compare_tui.candidates.model import RECOMMENDED_MEASURED, Candidate, Shortlist
from compare_tui.vocabulary import PriceGroup, money


def per_mtok(value: float | None) -> str:
    """A blended price, `$0.123/Mtok`, or `–`."""
    return "–" if value is None else f"{money(value)}/Mtok"


def quality_text(quality: Quality | None) -> str:
    """`71% (57–82%) of 48, 2026-12-06`, or `not measured yet`."""
    if quality is None:
        return "not measured yet"
    earlier = "" if quality.same_version else ", earlier set version"
    return (
        f"{quality.rate:.0%} ({quality.interval.low:.0%}–{quality.interval.high:.0%}) "
        f"of {quality.measured}, {quality.date}{earlier}"
    )


def savings_words(share: float) -> str:
    """`saves 67%` for a cheaper candidate, `costs 25% more` for a dearer one."""
    return f"saves {share:.0%}" if share >= 0 else f"costs {-share:.0%} more"


def savings_text(candidate: Candidate) -> str:
    if candidate.is_baseline:
        return "today"
    if candidate.savings_share is None:
        return "–"
    text = savings_words(candidate.savings_share)
    if candidate.savings_30d and candidate.savings_share > 0:
        text += f" ({money(candidate.savings_30d)}/30d)"
    return text


def rule_text(shortlist: Shortlist) -> str:
    return (
        f"about the same = within ±{shortlist.band:.0%} of today's blended price; * = recommended "
        f"(pre-selected): today's model, the best {RECOMMENDED_MEASURED} measured at or below its "
        "price by pass rate per dollar (none whose 95% interval lies wholly below today's pass "
        "rate), and every unmeasured one at or below it"
    )


def render_text(shortlist: Shortlist) -> str:
    lines = [f"Workload {shortlist.workload_id}"]
    today = shortlist.today
    if today is not None:
        lines.append(f"Today's model: {today.name} ({today.source} baseline)")
        lines.extend(_wrapped(f"  price: {per_mtok(today.price.usd_per_mtok)} blended ({today.price.basis_note})"))
        windows = " · ".join(f"{days} d {money(value)}" for days, value in today.spend.items())
        lines.append(f"  spend on this workload: {windows}")
        lines.extend(_wrapped(f"  counted from {today.spend_note}"))
    for note in shortlist.notes:
        lines.extend(_wrapped(f"Note: {note}"))
    lines.extend(_wrapped(f"Token mix: {shortlist.mix.sentence()}"))
    lines.extend(_wrapped(f"Groups: {rule_text(shortlist)}"))
    for group in PriceGroup:
        members = [c for c in shortlist.candidates if c.group is group]
        if not members:
            continue
        lines.append("")
        lines.append(f"{group.value} ({len(members)})")
        for c in members:
            mark = "*" if c.recommended else " "
            lines.append(f"{mark} {c.name:<24} {per_mtok(c.price.usd_per_mtok):>16}  {savings_text(c)}".rstrip())
            lines.append(f"    quality: {quality_text(c.quality)}")
            lines.extend(
                textwrap.wrap(f"price: {c.price.basis_note}", 80, initial_indent="    ", subsequent_indent="      ")
            )
    lines.append("")
    lines.extend(_wrapped(f"Recommended: {', '.join(shortlist.recommended) or 'none'}"))
    return "\n".join(lines)


def _wrapped(text: str) -> list[str]:
    indent = " " * (len(text) - len(text.lstrip()) + 2)
    return textwrap.wrap(text, 80, subsequent_indent=indent, break_on_hyphens=False)
