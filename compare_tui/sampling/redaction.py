"""Scrubbing personal data and secrets out of every string a sampled task holds.

Built-in kinds, applied in this order (after the user's own `--redact` rules, which run
first so a built-in rule cannot break up what the user asked for):
- `private_key`: PEM private-key blocks;
- `jwt`: JSON Web Tokens (`eyJ….….…`);
- `bearer_token`: the token after `Bearer` / `Token` (the word itself stays);
- `api_key`: provider keys by their shape — OpenAI `sk-…`, Anthropic `sk-ant-…`, Google
  `AIza…`, Groq `gsk_…`, xAI `xai-…`, Hugging Face `hf_…`, GitHub `ghp_…`/`github_pat_…`,
  AWS `AKIA…`, Slack `xox?-…`, GitLab `glpat-…`, Stripe `sk_live_…`;
- `credential`: the value in `api_key=…`, `password: …`, `secret=…`, `token=…`;
- `email`; `ip_address`: IPv4 (each octet ≤ 255) and IPv6 (three groups or more written,
  checked by `ipaddress`);
- `card_number`: 13–19 digits, spaces or dashes allowed, passing the Luhn check;
- `phone`: `+` and 8–15 digits, or 9–15 digits written with separators (spaces, dots,
  dashes, parentheses). A bare run of digits is not a phone (it is far more often an id or
  a timestamp), and neither is a decimal number.
Each match becomes `[REDACTED:<kind>]`. `Redactor.counts` says how many of each kind were
replaced; the values themselves are never kept.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from .errors import SamplingError


def placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def luhn_ok(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group(0))
    return 13 <= len(digits) <= 19 and luhn_ok(digits)


def _ipv4(match: re.Match[str]) -> bool:
    return all(int(octet) <= 255 for octet in match.group(0).split("."))


def _ipv6(match: re.Match[str]) -> bool:
    text = match.group(0)
    # At least three groups written: `a::b` or `::1` is far more often code or loopback
    # than someone's address.
    if "." not in text and sum(1 for group in text.split(":") if group) < 3:
        return False
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _phone(match: re.Match[str]) -> bool:
    text = match.group(0)
    digits = sum(c.isdigit() for c in text)
    if text.startswith("+"):
        return 8 <= digits <= 15
    separators = [c for c in text if not c.isdigit()]
    if not separators or separators == ["."]:  # a bare id or a decimal number
        return False
    return 9 <= digits <= 15


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    accept: Callable[[re.Match[str]], bool] | None = None
    """Extra check a match must pass (Luhn, octet range); None accepts every match."""
    group: str | None = None
    """Replace only this named group (the secret), keeping the words around it."""


_KEY_SHAPES = "|".join(
    [
        r"sk-ant-[A-Za-z0-9_\-]{16,}",
        r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}",
        r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
        r"AIza[0-9A-Za-z_\-]{30,}",
        r"gsk_[A-Za-z0-9]{20,}",
        r"xai-[A-Za-z0-9]{20,}",
        r"hf_[A-Za-z0-9]{20,}",
        r"gh[pousr]_[A-Za-z0-9]{20,}",
        r"github_pat_[A-Za-z0-9_]{20,}",
        r"(?:AKIA|ASIA)[0-9A-Z]{16}",
        r"xox[abposr]-[A-Za-z0-9\-]{10,}",
        r"glpat-[A-Za-z0-9_\-]{20,}",
    ]
)

BUILT_IN: tuple[Rule, ...] = (
    Rule(
        "private_key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL)
    ),
    Rule("jwt", re.compile(r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*")),
    Rule(
        "bearer_token",
        re.compile(r"\b(?:Bearer|Token)\s+(?P<secret>[A-Za-z0-9._~+/=\-]{8,})", re.IGNORECASE),
        group="secret",
    ),
    Rule("api_key", re.compile(rf"(?<![A-Za-z0-9_\-])(?:{_KEY_SHAPES})")),
    Rule(
        "credential",
        re.compile(
            r"(?i)\b(?:api[_\-]?key|secret|token|password|passwd|pwd)\b[\"']?\s*[:=]\s*[\"']?(?P<secret>[^\s\"',;\[\]]{6,})"
        ),
        group="secret",
    ),
    Rule(
        "email",
        re.compile(r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}"),
    ),
    Rule("ip_address", re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d]|\.\d)"), _ipv4),
    Rule(
        "ip_address",
        re.compile(
            r"(?<![0-9A-Za-z:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![0-9A-Za-z:])"
        ),
        _ipv6,
    ),
    Rule("card_number", re.compile(r"(?<![\d+])(?:\d[ \-]?){12,18}\d(?!\d)"), _card),
    Rule(
        "phone",
        re.compile(
            r"(?<![\w+])(?:\+\d{8,15}|(?:\+\d{1,3}[ .\-]?)?(?:\(\d{1,5}\)[ .\-]?)?\d{1,8}(?:[ .\-]\d{1,8}){0,5})(?!\w)"
        ),
        _phone,
    ),
)
_SECRET_KEY = re.compile(
    r"(?i)^(?:api[_\-]?key|x[_\-]api[_\-]key|secret|client[_\-]?secret|token|access[_\-]?token|auth[_\-]?token|"
    r"refresh[_\-]?token|password|passwd|pwd|authorization)$"
)
KINDS = tuple(dict.fromkeys(rule.kind for rule in BUILT_IN))


def custom_rules(patterns: Sequence[str]) -> tuple[Rule, ...]:
    """`--redact` patterns as rules `custom_1`, `custom_2`, …; bad ones raise `SamplingError`."""
    rules = []
    for number, pattern in enumerate(patterns, start=1):
        try:
            compiled = re.compile(pattern)
        except (re.error, OverflowError, RecursionError) as exc:
            raise SamplingError(f"--redact rule {number}: not a valid regular expression ({exc})") from None
        if compiled.fullmatch(""):
            raise SamplingError(
                f"--redact rule {number}: matches the empty string, so it would redact nothing useful; make it match the value itself"
            )
        rules.append(Rule(f"custom_{number}", compiled))
    return tuple(rules)


def _clean_surrogates(text: str) -> str:
    # A lone surrogate (from a `\ud800` escape in the log) cannot be written as UTF-8.
    if not any("\ud800" <= c <= "\udfff" for c in text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class Redactor:
    """Replaces every match of the rules in strings and JSON values, counting per kind."""

    def __init__(self, extra_patterns: Sequence[str] = ()) -> None:
        self.rules = custom_rules(extra_patterns) + BUILT_IN
        self.counts: Counter[str] = Counter()

    def text(self, text: str) -> str:
        text = _clean_surrogates(text)
        for rule in self.rules:
            text = rule.pattern.sub(partial(self._replace, rule), text)
        return text

    def _replace(self, rule: Rule, match: re.Match[str]) -> str:
        if rule.accept is not None and not rule.accept(match):
            return match.group(0)
        self.counts[rule.kind] += 1
        if rule.group is None:
            return placeholder(rule.kind)
        start, end = match.span(rule.group)
        whole = match.group(0)
        offset = match.start()
        return whole[: start - offset] + placeholder(rule.kind) + whole[end - offset :]

    def value(self, value: Any) -> Any:
        """`value` (a JSON value) with every string, key and number-as-text redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self._field(str(k), v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            # A card number or a user-ruled value can be logged as a JSON number.
            text = str(value)
            redacted = self.text(text)
            return value if redacted == text else redacted
        return value

    def _field(self, key: str, value: Any) -> Any:
        # `{"password": "hunter2"}`: the key says the value is a secret, whatever it looks like.
        if _SECRET_KEY.match(key) and isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            self.counts["credential"] += 1
            return placeholder("credential")
        return self.value(value)

    def json_text(self, text: str) -> str:
        """A string holding JSON (tool-call arguments): redacted as JSON when it parses,
        so an escaped value (`a\\u0040b.example`) cannot slip past the text rules."""
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            return self.text(text)
        return json.dumps(self.value(parsed), ensure_ascii=False, separators=(",", ":"))

    def summary(self) -> dict[str, int]:
        """Counts per kind that matched at least once, custom rules first."""
        order = [r.kind for r in self.rules]
        return {kind: self.counts[kind] for kind in dict.fromkeys(order) if self.counts[kind]}
