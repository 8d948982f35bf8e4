"""Log builders shared by the sampling tests, plus checks that each shape they write reads back.

`conversation(...)` returns the records one chat logs, turn by turn, each request repeating
the history (as gateways log it); `write_jsonl(...)` writes records (and raw extra lines),
gzip-compressed on request.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from compare_tui.sampling import LoggedTurn, read_record
from compare_tui.sampling.records import BatchOutput, BatchRequest, joined

DAY = 86400
END = 1_741_600_000.0  # 2025-03-10T09:46:40Z
TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "Find an order.", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]


def reply_message(position: int, tool_every: int = 3, text: str = "") -> dict[str, Any]:
    if tool_every and position % tool_every == tool_every - 1:
        arguments = json.dumps({"q": f"order-{position}"})
        return {"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{position}", "type": "function", "function": {"name": "lookup", "arguments": arguments}}]}
    return {"role": "assistant", "content": f"answer {position}. {text}".strip()}


def conversation(cid: str | None, turns: int, start: float, *, step: float = 60.0, tool_every: int = 3, text: str = "",
                 model: str = "gpt-4o", tags: Sequence[str] = (), system: str = "You are the order desk.") -> list[dict[str, Any]]:
    """The plain-shape records of one conversation of `turns` assistant turns."""
    history: list[dict[str, Any]] = [{"role": "system", "content": system}]
    records = []
    for position in range(turns):
        history.append({"role": "user", "content": f"question {position} of {cid}. {text}".strip()})
        reply = reply_message(position, tool_every, text)
        record: dict[str, Any] = {
            "request": {"model": model, "messages": list(history), "tools": TOOLS},
            "response": {"model": model, "choices": [{"message": reply, "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}]},
            "timestamp": start + position * step,
        }
        if cid is not None:
            record["conversation_id"] = cid
        if tags:
            record["tags"] = list(tags)
        records.append(record)
        history.append(reply)
        if reply.get("tool_calls"):
            history.append({"role": "tool", "tool_call_id": reply["tool_calls"][0]["id"], "content": '{"status": "shipped"}'})
    return records


def write_jsonl(path: Path, records: Iterable[dict[str, Any] | str], *, gz: bool = False) -> Path:
    """One JSON object per line; a `str` item is written as a raw line (for broken lines)."""
    text = "".join((item if isinstance(item, str) else json.dumps(item)) + "\n" for item in records)
    path.parent.mkdir(parents=True, exist_ok=True)
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def read_dir_bytes(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` by relative path: the byte-for-byte view of an output."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------- the builders' shapes read back


def test_plain_records_read_back_with_position_and_conversation():
    records = conversation("c1", 4, END)
    turns = [read_record(json.dumps(r).encode()) for r in records]
    assert all(isinstance(t, LoggedTurn) for t in turns)
    assert [t.position for t in turns] == [0, 1, 2, 3]
    assert {t.conversation for t in turns} == {"id:c1"}
    assert turns[2].reply.tool_name == "lookup" and turns[2].reply.tool_arguments == {"q": "order-2"}
    assert turns[3].request.messages[-2]["role"] == "tool"


def test_batch_halves_join_into_one_turn():
    body = conversation(None, 1, END)[0]["request"]
    request = read_record(json.dumps({"custom_id": "r1", "method": "POST", "url": "/v1/chat/completions", "body": body}).encode())
    output = read_record(json.dumps({"id": "b1", "custom_id": "r1", "response": {"status_code": 200, "request_id": "q", "body": {
        "created": int(END), "model": "gpt-4o-mini", "choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}}, "error": None}).encode())
    assert isinstance(request, BatchRequest) and isinstance(output, BatchOutput)
    turn = joined(request, output)
    assert turn.timestamp == END and turn.reply.text == "hi" and turn.models == ("gpt-4o", "gpt-4o-mini")
