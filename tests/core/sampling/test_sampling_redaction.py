"""Scrubbing: no planted value survives anywhere in the output folder; ordinary text does."""

from __future__ import annotations

import json

import pytest

from compare_tui.goldset import load_golden_set
from compare_tui.sampling import Redactor, SampleOptions, SamplingError, sample_logs, write_sampled_set
from compare_tui.sampling.redaction import luhn_ok
from tests.core.sampling.test_sampling_builders import END, TOOLS

PLANTED = {
    "email": ["alice.smith@example.com", "bob+billing@mail.example.org"],
    "phone": ["+1 (415) 555-0132", "+44 20 7946 0958", "415-555-0199", "(020) 7946 0958"],
    "api_key": [
        "sk-proj-AbCdEf1234567890GhIjKlMnOp",
        "sk-ant-api03-AbCdEf1234567890GhIjKlMn",
        "AIzaSyA1234567890abcdefghijklmnopqrstu",
        "gsk_abcdefghijklmnopqrstuv123456",
        "xai-abcdefghijklmnopqrstuv123456",
        "hf_abcdefghijklmnopqrstuvwxyz12",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    ],
    "bearer_token": ["opaqueToken.abc-DEF_123~xyz"],
    "jwt": ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
    "card_number": ["4111 1111 1111 1111", "5500-0000-0000-0004", "378282246310005"],
    "ip_address": ["192.168.10.20", "2001:db8:85a3::8a2e:370:7334", "fe80::1ff:fe23:4567:890a"],
    "custom_1": ["ACME-123456"],
    "credential": ["hunter2-hunter2"],
}
CARD_AS_NUMBER = 4012888888881881
ESCAPED_EMAIL = "carol\\u0040example.net"  # JSON escape of carol@example.net inside a JSON string


def _secret_text() -> str:
    values = [v for kind, vs in PLANTED.items() if kind not in ("bearer_token", "credential") for v in vs]
    return (
        " | ".join(values)
        + f" | Authorization: Bearer {PLANTED['bearer_token'][0]} | password={PLANTED['credential'][0]}"
    )


def _records() -> list[dict]:
    secret = _secret_text()
    tools = json.loads(json.dumps(TOOLS))
    tools[0]["function"]["description"] = f"Find an order. Support: {PLANTED['email'][0]}"
    records = []
    for index in range(4):
        history = [
            {"role": "system", "content": f"Escalate to {PLANTED['email'][1]}; api key {PLANTED['api_key'][0]}"},
            {"role": "user", "content": secret},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "lookup",
                            "arguments": '{"q": "' + ESCAPED_EMAIL + '", "card": ' + str(CARD_AS_NUMBER) + "}",
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": secret}]},
            {"role": "user", "content": f"and from {PLANTED['ip_address'][0]}?"},
        ]
        if index % 2:
            reply = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {
                            "name": "lookup",
                            "arguments": json.dumps(
                                {
                                    "q": secret,
                                    "card": CARD_AS_NUMBER,
                                    "password": "plain-looking",
                                    PLANTED["email"][0]: 1,
                                }
                            ),
                        },
                    }
                ],
            }
        else:
            reply = {"role": "assistant", "content": f"Sent to {PLANTED['email'][0]}. {secret}"}
        records.append(
            {
                "request": {"model": "gpt-4o", "messages": history, "tools": tools},
                "response": {"choices": [{"message": reply, "finish_reason": "stop"}]},
                "timestamp": END - index,
                "conversation_id": f"{PLANTED['email'][0]}-{index}",
                "tags": [f"user:{PLANTED['email'][1]}"],
            }
        )
    return records


@pytest.mark.parametrize("text_scorer", ["human", "regex"])
def test_no_planted_value_survives_anywhere_in_the_output_folder(tmp_path, text_scorer):
    log = tmp_path / "logs" / f"{PLANTED['email'][0]}.jsonl"  # even the file name is scrubbed
    log.parent.mkdir()
    log.write_text("".join(json.dumps(r) + "\n" for r in _records()))
    sampled = sample_logs([log], SampleOptions(samples=10, redact=("ACME-[0-9]{6}",), text_scorer=text_scorer))
    out = write_sampled_set(sampled, tmp_path / "out")
    files = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert len(files) == 2 + 4  # golden.toml, sample.json, four tasks
    forbidden = [v for vs in PLANTED.values() for v in vs] + [
        "carol@example.net",
        ESCAPED_EMAIL,
        "carol",
        str(CARD_AS_NUMBER),
        "plain-looking",
        "ACME-[0-9]",
    ]
    for path, data in files.items():
        for value in forbidden:
            assert value.encode() not in data, f"{value!r} survived in {path.relative_to(out)}"
            assert json.dumps(value)[1:-1].encode() not in data, (
                f"{value!r} survived JSON-escaped in {path.relative_to(out)}"
            )
    replaced = sampled.info["redaction"]["replaced"]
    assert set(PLANTED) <= set(replaced), replaced
    assert sampled.info["redaction"]["custom_rules"] == 1
    goldset = load_golden_set(out)
    assert len(goldset.tasks) == 4
    assert any("[REDACTED:email]" in json.dumps(t.model_dump(mode="json")) for t in goldset.tasks)


def test_ordinary_text_is_left_alone():
    redactor = Redactor()
    keep = [
        "Meeting on 2025-03-10 at 14:30:00, room 4.12, version 1.2.3, order 1234567890, total 1,234.56",
        "std::vector<int> and a::b, ratio 3.14159265, the task-sk-reference, gpt-4o-2024-08-06",
        "ISO time 2025-03-10T09:46:40Z; MAC 00:1A:2B:3C:4D:5E; call at 10:30",
    ]
    for text in keep:
        assert redactor.text(text) == text
    assert redactor.summary() == {}


def test_each_kind_is_counted_never_stored():
    redactor = Redactor(["secret-[a-z]+"])
    out = redactor.text(
        "mail a@b.example, card 4111-1111-1111-1111, ip 10.0.0.1, secret-plan, not a card 4111 1111 1111 1112"
    )
    assert (
        out
        == "mail [REDACTED:email], card [REDACTED:card_number], ip [REDACTED:ip_address], [REDACTED:custom_1], not a card 4111 1111 1111 1112"
    )
    assert redactor.summary() == {"custom_1": 1, "email": 1, "ip_address": 1, "card_number": 1}
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")


def test_bad_user_rules_are_refused_before_reading():
    with pytest.raises(SamplingError, match="--redact rule 1: not a valid"):
        Redactor(["(unclosed"])
    with pytest.raises(SamplingError, match="empty string"):
        Redactor(["x*"])


def test_lone_surrogates_become_replacement_characters(tmp_path):
    record = _records()[0]
    record["request"]["messages"][1]["content"] = "broken \ud800 text"
    log = tmp_path / "l.jsonl"
    log.write_text(json.dumps(record) + "\n")
    out = write_sampled_set(sample_logs([log], SampleOptions(samples=1)), tmp_path / "out")
    assert "broken \ufffd text" in json.dumps(load_golden_set(out).tasks[0].model_dump(mode="json"), ensure_ascii=False)


def test_redaction_summary_in_sample_json_has_counts_only(tmp_path):
    log = tmp_path / "l.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in _records()))
    out = write_sampled_set(sample_logs([log], SampleOptions(samples=4, redact=("ACME-[0-9]{6}",))), tmp_path / "out")
    info = json.loads((out / "sample.json").read_text())
    assert all(isinstance(n, int) and n > 0 for n in info["redaction"]["replaced"].values())
    assert info["redaction"]["total"] == sum(info["redaction"]["replaced"].values())
