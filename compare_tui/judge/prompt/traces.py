"""Reasoning traces removed before an answer reaches a judge (and before a judge's reply is read).

A judge should compare what a user would see, not a model's scratch work: a long trace can
sway a judge (verbosity bias) and can contain a different answer than the final one. Servers
that separate reasoning (`reasoning_content`) already keep it out of the answer text; this
handles models that inline it.
"""

from __future__ import annotations

import re

# Paired tags and markers used by common reasoning models (DeepSeek-R1/Qwen3 `<think>`,
# others `<thinking>`/`<reasoning>`, Magistral `[THINK]`, gpt-oss harmony's analysis channel).
_PAIRED = [
    (r"<think>", r"</think>"),
    (r"<thinking>", r"</thinking>"),
    (r"<reasoning>", r"</reasoning>"),
    (r"<reflection>", r"</reflection>"),
    (r"\[THINK\]", r"\[/THINK\]"),
    (r"<\|begin_of_thought\|>", r"<\|end_of_thought\|>"),
    (r"<\|channel\|>analysis<\|message\|>", r"<\|end\|>"),
]
_BLOCKS = [re.compile(f"{open_}.*?(?:{close}|$)", re.DOTALL | re.IGNORECASE) for open_, close in _PAIRED]
# A reply that starts inside a trace (the template opened `<think>` in the prompt) shows only
# the closing tag: everything before the first one is reasoning.
_CLOSERS = re.compile(r"</think>|</thinking>|</reasoning>|\[/THINK\]", re.IGNORECASE)
_OPENERS = re.compile(r"<think>|<thinking>|<reasoning>|\[THINK\]", re.IGNORECASE)
_HARMONY_FINAL = re.compile(r"<\|start\|>assistant<\|channel\|>final<\|message\|>|<\|channel\|>final<\|message\|>")


def strip_reasoning(text: str) -> str:
    """`text` without reasoning traces, trimmed. An unclosed trace runs to the end (a reply cut
    off while still reasoning has no answer to judge)."""
    if not text:
        return ""
    closer = _CLOSERS.search(text)
    if closer and not _OPENERS.search(text, 0, closer.start()):
        text = text[closer.end() :]
    for block in _BLOCKS:
        text = block.sub("", text)
    text = _HARMONY_FINAL.sub("", text).replace("<|return|>", "").replace("<|end|>", "")
    return text.strip()
