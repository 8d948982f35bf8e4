"""The gateway's traffic-log callback (`local/traffic_log.py`): what one line holds, scrubbed
by the sampler's own redaction, and that `sample` reads the line as LiteLLM-style."""

from __future__ import annotations

import json
from pathlib import Path

from compare_tui.local import gateway, traffic_log
from compare_tui.sampling import LoggedTurn, Redactor, read_record
from compare_tui.sampling import redaction as redaction_module

SECRETS = "mail bob@example.com, key sk-proj-" + "Ab3" * 12


def _payload() -> dict[str, object]:
    return {
        "litellm_call_id": "call-1",
        "startTime": 1796655950.27,
        "endTime": 1796655950.31,
        "model": "openai/b-model",
        "model_group": "tickets",
        "model_id": "candidate-b",
        "metadata": {"is_silent_experiment": True},
        "status": "success",
        "prompt_tokens": 15,
        "completion_tokens": 2,
        "messages": [{"role": "user", "content": SECRETS}],
        "response": {"choices": [{"message": {"role": "assistant", "content": "call +44 20 7946 0958"}}]},
        "model_parameters": {"tools": [{"type": "function", "function": {"name": "send", "description": SECRETS}}]},
    }


def test_a_line_names_the_deployment_and_holds_nothing_the_redaction_would_scrub() -> None:
    record = traffic_log.traffic_record(_payload(), Redactor())
    assert (record["model"], record["model_id"], record["is_silent_experiment"]) == ("tickets", "candidate-b", True)
    text = json.dumps(record)
    for secret in ("bob@example.com", "sk-proj-", "7946"):
        assert secret not in text
    assert record["messages"][0]["content"] == "mail [REDACTED:email], key [REDACTED:api_key]"
    assert "[REDACTED:email]" in record["tools"][0]["function"]["description"]


def test_the_redaction_loaded_by_path_is_the_samplers_own() -> None:
    # In the proxy's interpreter compare-tui is not importable: the callback loads the module file.
    by_path = traffic_log.redactor_class_at(redaction_module.__file__)
    assert by_path is not Redactor
    assert by_path().value(_payload()) == Redactor().value(_payload())


def test_sample_reads_a_logged_line_as_a_litellm_record() -> None:
    line = json.dumps(traffic_log.traffic_record(_payload(), Redactor()))
    turn = read_record(line.encode())
    assert isinstance(turn, LoggedTurn)
    assert "tickets" in turn.models and turn.reply.text == "call [REDACTED:phone]"


def test_the_managed_gateway_config_names_the_callback_and_its_copy_is_the_package_file(tmp_path: Path) -> None:
    config = json.loads(gateway.config_text("openai", "m", "route", "KEY", None))
    assert config["litellm_settings"]["callbacks"] == [traffic_log.CALLBACK]
    log = gateway.install_traffic_log(tmp_path)
    copied = tmp_path / f"{traffic_log.MODULE}.py"
    assert copied.read_text() == Path(traffic_log.__file__).read_text()
    env = gateway.traffic_env(log)
    assert env[traffic_log.LOG_ENV] == str(log) and Path(env[traffic_log.REDACTION_ENV]).is_file()


def test_a_mirrored_copy_is_told_by_the_calls_own_metadata() -> None:
    # LiteLLM 1.108.7 tags the silent call's kwargs, not its standard logging object.
    assert traffic_log.silent_copy({"litellm_params": {"metadata": {"is_silent_experiment": True}}})
    assert not traffic_log.silent_copy({"litellm_params": {"metadata": {}}, "metadata": None})
    record = traffic_log.traffic_record({**_payload(), "metadata": {}}, Redactor(), silent=True)
    assert record["is_silent_experiment"] is True
