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
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Find an order.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
]


def reply_message(position: int, tool_every: int = 3, text: str = "") -> dict[str, Any]:
    if tool_every and position % tool_every == tool_every - 1:
        arguments = json.dumps({"q": f"order-{position}"})
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"call_{position}", "type": "function", "function": {"name": "lookup", "arguments": arguments}}
            ],
        }
    return {"role": "assistant", "content": f"answer {position}. {text}".strip()}


def conversation(
    cid: str | None,
    turns: int,
    start: float,
    *,
    step: float = 60.0,
    tool_every: int = 3,
    text: str = "",
    model: str = "gpt-4o",
    tags: Sequence[str] = (),
    system: str = "You are the order desk.",
) -> list[dict[str, Any]]:
    """The plain-shape records of one conversation of `turns` assistant turns."""
    history: list[dict[str, Any]] = [{"role": "system", "content": system}]
    records = []
    for position in range(turns):
        history.append({"role": "user", "content": f"question {position} of {cid}. {text}".strip()})
        reply = reply_message(position, tool_every, text)
        record: dict[str, Any] = {
            "request": {"model": model, "messages": list(history), "tools": TOOLS},
            "response": {
                "model": model,
                "choices": [{"message": reply, "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}],
            },
            "timestamp": start + position * step,
        }
        if cid is not None:
            record["conversation_id"] = cid
        if tags:
            record["tags"] = list(tags)
        records.append(record)
        history.append(reply)
        if reply.get("tool_calls"):
            history.append(
                {"role": "tool", "tool_call_id": reply["tool_calls"][0]["id"], "content": '{"status": "shipped"}'}
            )
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
    request = read_record(
        json.dumps({"custom_id": "r1", "method": "POST", "url": "/v1/chat/completions", "body": body}).encode()
    )
    output = read_record(
        json.dumps(
            {
                "id": "b1",
                "custom_id": "r1",
                "response": {
                    "status_code": 200,
                    "request_id": "q",
                    "body": {
                        "created": int(END),
                        "model": "gpt-4o-mini",
                        "choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
                    },
                },
                "error": None,
            }
        ).encode()
    )
    assert isinstance(request, BatchRequest) and isinstance(output, BatchOutput)
    turn = joined(request, output)
    assert turn.timestamp == END and turn.reply.text == "hi" and turn.models == ("gpt-4o", "gpt-4o-mini")


# ---------------------------------------------------------------- agent runs (whole-run sampling)

AGENT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "find_order",
            "description": "Find an order by customer e-mail.",
            "parameters": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "refund",
            "description": "Refund an order.",
            "parameters": {
                "type": "object",
                "properties": {"order": {"type": "string"}, "amount": {"type": "number"}},
                "required": ["order"],
            },
        },
    },
]


def agent_run(
    cid: str, steps: int, start: float, *, step_s: float = 5.0, email: str = "ana@example.com"
) -> list[dict[str, Any]]:
    """The plain-shape records of one complete agent run: `steps - 1` tool calls, each followed
    by its result, then a final text answer; one record per step, each request the history
    the agent saw."""
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are the refunds agent. Use the tools."},
        {"role": "user", "content": f"Refund my last order ({cid}); my e-mail is {email}."},
    ]
    records = []
    for index in range(steps):
        if index < steps - 1:
            name, arguments = (
                ("find_order", {"email": email})
                if index == 0
                else ("refund", {"order": f"{cid}-o{index}", "amount": 10 * index})
            )
            reply: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{cid}_{index}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(arguments)},
                    }
                ],
            }
        else:
            reply = {"role": "assistant", "content": f"Done: {cid} refunded."}
        records.append(
            {
                "request": {"model": "gpt-4o", "messages": list(history), "tools": AGENT_TOOLS},
                "response": {
                    "model": "gpt-4o",
                    "choices": [
                        {"message": reply, "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}
                    ],
                },
                "timestamp": start + index * step_s,
                "conversation_id": cid,
            }
        )
        history.append(reply)
        if reply.get("tool_calls"):
            history.append(
                {
                    "role": "tool",
                    "tool_call_id": reply["tool_calls"][0]["id"],
                    "content": json.dumps({"ok": True, "step": index}),
                }
            )
    return records


def broken_run(records: list[dict[str, Any]], how: str) -> list[dict[str, Any]]:
    """A copy of an agent run's records (at least 3 steps) broken in one way; `how` is the
    skip reason it must earn without `run_`: incomplete, interleaved, missing_tool_result,
    tool_id_mismatch."""
    out = json.loads(json.dumps(records))
    if how == "incomplete":
        return out[:-1]  # ends on a tool call: no final answer
    if how == "interleaved":
        twin = json.loads(json.dumps(out[1]))
        twin["response"]["choices"][0]["message"] = {"role": "assistant", "content": "something else"}
        return [*out, twin]
    for record in out[1:]:
        messages = record["request"]["messages"]
        if how == "missing_tool_result":
            record["request"]["messages"] = [m for m in messages if m["role"] != "tool"]
        elif how == "tool_id_mismatch":
            for message in messages:
                if message["role"] == "tool":
                    message["tool_call_id"] = "call_wrong"
    return out
