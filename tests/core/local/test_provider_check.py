"""`gateway up`'s provider-key check (`local.provider_check`) against the loopback fake standing
in for the gateway: one chat request for one token, an audit-ledger row of no run, and a refusal
that says what was wrong and what to do with every key masked. (End to end through the real
LiteLLM: tests/integration/test_gateway_up.py.)"""

from __future__ import annotations

import sqlite3

from compare_tui.local.provider_check import CHECK_TASK_ID, check_provider_key
from compare_tui.store import Store
from tests.support.fake_openai import FakeServer, http_error, text

GATEWAY_KEY = "sk-" + "2" * 40
WRONG = "not-a-key-shape-but-secret-1234"


def _check(tmp_path, server: FakeServer):
    with Store.open(tmp_path / "runs.sqlite") as store:
        return check_provider_key(
            store, url=server.url, route="fake-model", gateway_key=GATEWAY_KEY, provider="openai",
            key_env="OPENAI_API_KEY", secrets=[WRONG, GATEWAY_KEY],
        )  # fmt: skip


def _rows(tmp_path):
    with sqlite3.connect(tmp_path / "runs.sqlite") as conn:
        query = "SELECT run_id, task_id, status, state, error_class FROM audit ORDER BY id"
        return [tuple(row) for row in conn.execute(query)]


def test_an_answer_passes_with_one_audited_one_token_request(tmp_path):
    with FakeServer(default=text("OK")) as server:
        check = _check(tmp_path, server)
        chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert check.refusal is None and check.remedy is None and check.status == 200
    assert len(chats) == 1 and chats[0].body["max_tokens"] == 1 and chats[0].body["stream"] is False
    assert chats[0].headers["authorization"] == f"Bearer {GATEWAY_KEY}"
    assert _rows(tmp_path) == [(None, CHECK_TASK_ID, 200, "done", None)]


def test_a_refused_key_says_so_in_the_providers_words_with_the_key_masked(tmp_path):
    litellm_says = (
        f"litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect API key provided: {WRONG}. "
        "You can find your API key at https://platform.openai.com/account/api-keys. "
        "LiteLLM: model group 'fake-model' failed with the error above. No fallback was attempted."
    )
    with FakeServer(default=http_error(401, litellm_says)) as server:
        check = _check(tmp_path, server)
    assert check.refusal == (
        "openai refused the key in $OPENAI_API_KEY (through the gateway: HTTP 401: Incorrect API key provided: "
        "[redacted]. You can find your API key at https://platform.openai.com/account/api-keys.)"
    )
    assert check.remedy is not None and check.remedy.startswith("Export the right key in OPENAI_API_KEY")
    assert _rows(tmp_path) == [(None, CHECK_TASK_ID, 401, "done", "auth")]


def test_any_other_failure_names_the_route_and_what_to_check(tmp_path):
    said = "litellm.NotFoundError: NotFoundError: OpenAIException - The model `fake-model` does not exist"
    with FakeServer(default=http_error(404, said)) as server:
        check = _check(tmp_path, server)
    assert check.refusal == (
        "a one-token request to openai/fake-model through the gateway failed "
        "(HTTP 404: The model `fake-model` does not exist)"
    )
    assert check.remedy is not None and "--api-base" in check.remedy
    with FakeServer() as server:
        dead = server.url
    with Store.open(tmp_path / "runs.sqlite") as store:
        check = check_provider_key(
            store, url=dead, route="fake-model", gateway_key=GATEWAY_KEY, provider="openai",
            key_env="OPENAI_API_KEY", secrets=[],
        )  # fmt: skip
    assert check.status is None and check.refusal is not None and "through the gateway failed (" in check.refusal
    assert _rows(tmp_path)[-1][2:4] == (None, "done")
