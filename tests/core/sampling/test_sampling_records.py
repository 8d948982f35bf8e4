"""Record shapes, skip reasons, timestamps and windows: one log line at a time."""

from __future__ import annotations

import json

import pytest

from compare_tui.sampling import SKIP_REASONS, LoggedTurn, SamplingError, Skipped, parse_window, read_record
from compare_tui.sampling.records import BatchOutput
from compare_tui.sampling.window import parse_timestamp
from tests.core.sampling.test_sampling_builders import END, conversation

COMPLETION = {
    "created": int(END),
    "model": "gpt-4o",
    "choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
}


def _read(record) -> LoggedTurn:
    turn = read_record((record if isinstance(record, str) else json.dumps(record)).encode())
    assert isinstance(turn, LoggedTurn)
    return turn


def _reason(line: str | bytes | dict) -> str:
    raw = json.dumps(line).encode() if isinstance(line, dict) else line if isinstance(line, bytes) else line.encode()
    with pytest.raises(Skipped) as caught:
        read_record(raw)
    assert caught.value.reason in SKIP_REASONS
    return caught.value.reason


def test_plain_shape_with_every_response_form():
    base = conversation("c", 1, END)[0]
    for response in (
        COMPLETION,
        {"role": "assistant", "content": "ok"},
        "ok",
        {"status_code": 200, "body": COMPLETION},
    ):
        turn = _read({**base, "response": response})
        assert turn.reply.text == "ok" and turn.conversation == "id:c"


def test_litellm_shape_takes_tools_from_model_parameters():
    record = {
        "messages": [{"role": "user", "content": "hi"}],
        "response": COMPLETION,
        "startTime": "2025-03-10T09:00:00Z",
        "model": "gpt-4o",
        "model_parameters": {"tools": [{"type": "function", "function": {"name": "f"}}]},
        "metadata": {"session_id": "s-1", "tags": ["billing"]},
    }
    turn = _read(record)
    assert turn.request.tools[0]["function"]["name"] == "f"
    assert turn.conversation == "id:s-1" and turn.tags == ("billing",)
    assert turn.timestamp == parse_timestamp("2025-03-10T09:00:00Z")


def test_batch_output_with_embedded_request_is_a_whole_turn():
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    for embedded in (body, {"custom_id": "x", "method": "POST", "url": "/v1/chat/completions", "body": body}):
        turn = _read({"custom_id": "x", "response": {"status_code": 200, "body": COMPLETION}, "request": embedded})
        assert turn.reply.text == "ok" and turn.timestamp == END
    alone = read_record(json.dumps({"custom_id": "x", "response": {"status_code": 200, "body": COMPLETION}}).encode())
    assert isinstance(alone, BatchOutput)


def test_developer_role_becomes_system_and_text_parts_stay_text():
    turn = _read(
        {
            "request": {
                "messages": [
                    {"role": "developer", "content": "rules"},
                    {"role": "user", "content": [{"type": "text", "text": "hi"}], "refusal": None},
                ]
            },
            "response": COMPLETION,
            "timestamp": END,
        }
    )
    assert turn.request.messages == [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    ]


def test_without_an_id_the_opening_groups_a_conversation():
    first, second = conversation(None, 2, END)
    other = conversation(None, 1, END, system="Another desk.")[0]
    assert _read(first).conversation == _read(second).conversation != _read(other).conversation
    assert _read(first).conversation.startswith("opening:")


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("", "blank"),
        ("{not json", "bad_json"),
        (b"\xff\xfe{}", "not_utf8"),
        ("[1, 2]", "not_object"),
        ({"hello": "world"}, "unknown_shape"),
        ({"request": {"messages": []}, "response": COMPLETION, "timestamp": END}, "no_messages"),
        (
            {"request": {"messages": [{"role": "system", "content": "x"}]}, "response": COMPLETION, "timestamp": END},
            "no_user_message",
        ),
        (
            {"request": {"messages": [{"role": "wizard", "content": "x"}]}, "response": COMPLETION, "timestamp": END},
            "bad_messages",
        ),
        (
            {
                "request": {
                    "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]
                },
                "response": COMPLETION,
                "timestamp": END,
            },
            "unsupported_content",
        ),
        (
            {
                "request": {"messages": [{"role": "user", "content": "x"}], "functions": [{"name": "f"}]},
                "response": COMPLETION,
                "timestamp": END,
            },
            "legacy_functions",
        ),
        (
            {
                "request": {"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "web_search"}]},
                "response": COMPLETION,
                "timestamp": END,
            },
            "bad_tools",
        ),
        ({"request": {"messages": [{"role": "user", "content": "x"}]}, "timestamp": END}, "no_reply"),
        (
            {
                "request": {"messages": [{"role": "user", "content": "x"}]},
                "response": {"status_code": 500, "body": {}},
                "timestamp": END,
            },
            "failed_request",
        ),
        (
            {"request": {"messages": [{"role": "user", "content": "x"}]}, "response": " ", "timestamp": END},
            "empty_reply",
        ),
        (
            {
                "request": {"messages": [{"role": "user", "content": "x"}]},
                "response": {
                    "choices": [{"message": {"role": "assistant", "content": "cut"}, "finish_reason": "length"}]
                },
                "timestamp": END,
            },
            "truncated_reply",
        ),
        (
            {
                "request": {"messages": [{"role": "user", "content": "x"}]},
                "response": {
                    "role": "assistant",
                    "tool_calls": [
                        {"function": {"name": "a", "arguments": "{}"}},
                        {"function": {"name": "b", "arguments": "{}"}},
                    ],
                },
                "timestamp": END,
            },
            "several_tool_calls",
        ),
        (
            {
                "request": {"messages": [{"role": "user", "content": "x"}]},
                "response": {"role": "assistant", "tool_calls": [{"function": {"name": "a", "arguments": "{oops"}}]},
                "timestamp": END,
            },
            "bad_tool_call",
        ),
        ({"request": {"messages": [{"role": "user", "content": "x"}]}, "response": "ok"}, "bad_timestamp"),
        (
            {
                "request": {"messages": [{"role": "user", "content": "x"}]},
                "response": "ok",
                "timestamp": "last tuesday",
            },
            "bad_timestamp",
        ),
        (
            {"messages": [{"role": "user", "content": "x"}], "response": COMPLETION, "status": "failure"},
            "failed_request",
        ),
    ],
)
def test_every_unusable_line_has_a_named_reason(line, reason):
    assert _reason(line) == reason


def test_timestamps_iso_epoch_seconds_and_milliseconds():
    assert parse_timestamp("2025-03-10T09:46:40Z") == END
    assert parse_timestamp("2025-03-10T10:46:40+01:00") == END
    assert parse_timestamp("2025-03-10 09:46:40") == END  # no zone: UTC
    assert parse_timestamp(END) == parse_timestamp(str(int(END))) == parse_timestamp(END * 1000) == END
    assert parse_timestamp(True) is None and parse_timestamp(-5) is None and parse_timestamp("soon") is None


def test_window_presets_and_limits():
    assert [parse_window(w) for w in ("1h", "12h", "1d", "7d", "2w", "30d")] == [
        3600,
        43200,
        86400,
        604800,
        1209600,
        2592000,
    ]
    for bad in ("31d", "5w", "0h", "30m", "week", ""):
        with pytest.raises(SamplingError, match="--window"):
            parse_window(bad)
