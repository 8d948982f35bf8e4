"""The model catalogue: loading, refusals, key policy, weights verification."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compare_tui.catalogue import (
    HOST_ATTESTED,
    VERIFIED,
    Catalogue,
    CatalogueError,
    ModelEntry,
    ModelRefused,
    UnknownModel,
    check_entry,
    combined_digest,
    hash_file,
    load_catalogue,
    mask_provider_keys,
    provider_key_kind,
    redact,
    refuse_if_needed,
    resolve_key,
    verify_weights,
    write_catalogue,
)
from compare_tui.catalogue import verify as verify_module


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


FILES = {"model.gguf": sha(b"weights"), "sub/tokenizer.json": sha(b"{}")}

VALID = f"""
[[model]]
name = "smollm2-135m"
kind = "local"
endpoint = "http://127.0.0.1:8081/v1/"
model = "smollm2-135m"
revision = "2025-02-07"
weights_digest = "{combined_digest(FILES)}"
weights_dir = "weights"
files = {{ "model.gguf" = "{FILES["model.gguf"]}", "sub/tokenizer.json" = "{FILES["sub/tokenizer.json"]}" }}
key_env = "COMPARE_TUI_KEY"
[model.serving]
stack = "llama.cpp llama-server"
quantisation = "Q4_1"
context_size = 8192
extra = {{ flash_attn = "on" }}
[model.cost]
basis = "hardware"
usd_per_hour = 0.5

[[model]]
name = "gpt-hosted"
kind = "hosted"
endpoint = "https://gateway.example.com/v1"
model = "gpt-4o-mini"
revision = "2024-07-18"
weights_digest = "sha256:{"a" * 64}"
[model.cost]
basis = "token_price"
usd_per_mtok_input = 0.15
usd_per_mtok_output = 0.6
captured = 2026-11-30
source = "https://example.com/pricing"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def entry(**overrides) -> ModelEntry:
    fields = dict(
        name="m",
        kind="local",
        endpoint="http://127.0.0.1:8081/v1",
        model="m",
        revision="r1",
        weights_digest=combined_digest(FILES),
        weights_dir="/srv/m",
        files=FILES,
    )
    fields.update(overrides)
    return ModelEntry(**fields)


# ------------------------------------------------------------------ loading


def test_valid_catalogue_loads(tmp_path: Path) -> None:
    catalogue = load_catalogue(write(tmp_path, VALID))
    assert catalogue.names() == ["smollm2-135m", "gpt-hosted"]
    local = catalogue.get("smollm2-135m")
    assert local.endpoint == "http://127.0.0.1:8081/v1"  # trailing slash dropped
    assert local.weights_dir == tmp_path / "weights"  # relative to the catalogue file
    assert local.serving.context_size == 8192 and local.serving.extra == {"flash_attn": "on"}
    hosted = catalogue.get("gpt-hosted")
    assert hosted.cost.captured == "2026-11-30"  # an unquoted TOML date is accepted
    assert hosted.cost.currency == "USD"
    assert check_entry(local) == [] and check_entry(hosted) == []


def test_unknown_model_names_file_and_choices(tmp_path: Path) -> None:
    path = write(tmp_path, VALID)
    with pytest.raises(UnknownModel) as info:
        load_catalogue(path).get("smollm2")
    message = str(info.value)
    assert f"unknown model 'smollm2'; the catalogue at {path} has: smollm2-135m, gpt-hosted" in message
    assert "did you mean 'smollm2-135m'" in message
    assert isinstance(info.value, KeyError) and isinstance(info.value, CatalogueError)
    assert not message.startswith(("'", '"')) and info.value.args[0] == message


def test_pins_exclude_key_material_and_are_json(tmp_path: Path) -> None:
    pins = load_catalogue(write(tmp_path, VALID)).get("smollm2-135m").pins()
    assert "key_env" not in pins
    assert pins["weights_digest"] == combined_digest(FILES)
    assert pins["files"] == FILES and pins["cost"]["basis"] == "hardware"
    assert json.loads(json.dumps(pins)) == pins


def test_an_entry_round_trips_through_its_own_dump(tmp_path: Path) -> None:
    # key_env None (the local entry) used to crash the key-name check on re-validation.
    for entry in load_catalogue(write(tmp_path, VALID)).models:
        again = type(entry).model_validate(entry.model_dump())
        assert again == entry


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    catalogue = load_catalogue(write(tmp_path, VALID))
    out = write_catalogue(catalogue, tmp_path / "nested" / "out.toml", header="Written by test\nline 2")
    text = out.read_text()
    assert text.startswith("# Written by test\n# line 2\n")
    assert "files = {}" not in text and "[model.serving]" in text
    again = load_catalogue(out)
    assert again.models == catalogue.models
    assert [p.name for p in out.parent.iterdir()] == ["out.toml"]  # no temp file left


# (snippet replacing one line of the first entry, field named, text in the fix)
INVALID = [
    ('kind = "local"', 'kind = "locl"', "`kind`", "'local' or 'hosted'"),
    ('endpoint = "http://127.0.0.1:8081/v1/"', 'endpoint = "ftp://x"', "`endpoint`", "http(s) URL"),
    ('endpoint = "http://127.0.0.1:8081/v1/"', 'endpoint = "http://h/v1?x=1"', "`endpoint`", "base URL only"),
    ('weights_digest = "', 'weights_digest = "md5:', "`weights_digest`", '"sha256:" followed by 64 hex'),
    ('name = "smollm2-135m"', 'name = "has space"', "`name`", "letters, digits"),
    ('model = "smollm2-135m"', "", "`model`", "add `model = …`"),
    ('key_env = "COMPARE_TUI_KEY"', 'key_env = "1BAD"', "`key_env`", "name of an environment variable"),
    ("usd_per_hour = 0.5", "usd_per_hour = 0", "`cost.usd_per_hour`", "greater than 0"),
    ("usd_per_hour = 0.5", "usd_per_hour = 0.5\nusd_per_hr = 1", "`cost.usd_per_hr`", "did you mean 'usd_per_hour'"),
    ('basis = "hardware"', 'basis = "tokens"', "`cost`", 'basis = "hardware" or basis = "token_price"'),
    ('basis = "hardware"', "", "`cost`", "no basis given"),
    ('stack = "llama.cpp llama-server"', 'stak = "x"', "`serving.stak`", "did you mean 'stack'"),
    ("context_size = 8192", 'context_size = "big"', "`serving.context_size`", "valid integer"),
    ('"model.gguf" =', '"../model.gguf" =', '`files."../model.gguf"`', "relative to weights_dir"),
    ('name = "smollm2-135m"', 'name = "smollm2-135m"\nflavour = 1', "`flavour`", "unknown field"),
]


@pytest.mark.parametrize(("old", "new", "field", "fix"), INVALID, ids=[i[2] + i[1][:12] for i in INVALID])
def test_invalid_field_names_file_entry_field_and_fix(tmp_path: Path, old: str, new: str, field: str, fix: str) -> None:
    assert old in VALID
    path = write(tmp_path, VALID.replace(old, new, 1))
    with pytest.raises(CatalogueError) as info:
        load_catalogue(path)
    (problem,) = info.value.problems
    assert problem.startswith(f"{path}: [[model]] #1")
    assert f"field {field}" in problem and fix in problem
    assert "Traceback" not in problem and "pydantic" not in problem


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    text = VALID.replace('kind = "local"', 'kind = "x"').replace("usd_per_mtok_input = 0.15", "")
    with pytest.raises(CatalogueError) as info:
        load_catalogue(write(tmp_path, text))
    problems = info.value.problems
    assert len(problems) == 2
    assert "[[model]] #1 'smollm2-135m'" in problems[0]
    assert "[[model]] #2 'gpt-hosted', field `cost.usd_per_mtok_input`: missing" in problems[1]
    assert str(info.value).count("\n  - ") == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[model]\n", "not valid TOML"),
        ("", "no models; add at least one [[model]] table"),
        ('[[models]]\nname = "x"\n', "unknown top-level key 'models'; did you mean 'model'?"),
        ('model = "x"\n', "must be an array of tables"),
    ],
)
def test_file_level_errors(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(CatalogueError) as info:
        load_catalogue(write(tmp_path, text))
    assert expected in str(info.value) and str(tmp_path) in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError, match="no such file"):
        load_catalogue(tmp_path / "absent.toml")


def test_duplicate_names_refused(tmp_path: Path) -> None:
    text = VALID.replace('name = "gpt-hosted"', 'name = "smollm2-135m"')
    with pytest.raises(CatalogueError) as info:
        load_catalogue(write(tmp_path, text))
    assert "[[model]] #2 'smollm2-135m': name already used by [[model]] #1" in str(info.value)
    with pytest.raises(ValueError, match="more than once"):
        Catalogue(models=(entry(), entry()))


def test_keys_in_the_file_are_never_echoed(tmp_path: Path) -> None:
    secret = "sk-" + "proj-" + "Q" * 40
    text = VALID.replace('key_env = "COMPARE_TUI_KEY"', f'api_key = "{secret}"\nkey_env = "{secret}"')
    text = text.replace("https://gateway.example.com", "https://user:hunter2@gateway.example.com")
    with pytest.raises(CatalogueError) as info:
        load_catalogue(write(tmp_path, text))
    message = str(info.value)
    assert secret not in message and "hunter2" not in message
    assert "keys never go in the catalogue" in message
    assert "OpenAI project key (sk-proj-)" in message  # names the pattern, not the value
    assert "URL contains credentials" in message


def test_hosted_weights_dir_rejected() -> None:
    with pytest.raises(ValueError, match='weights_dir is for kind = "local" only'):
        entry(kind="hosted")


def test_captured_must_be_a_real_date() -> None:
    cost = dict(basis="token_price", usd_per_mtok_input=1, usd_per_mtok_output=1, source="s")
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        entry(cost={**cost, "captured": "2026-02-30"})
    assert entry(cost={**cost, "captured": "2026-02-28"}).cost.captured == "2026-02-28"


# ------------------------------------------------------------------ refusals


def test_combined_digest_definition() -> None:
    lines = "".join(f"{n} {d.removeprefix('sha256:')}\n" for n, d in sorted(FILES.items()))
    assert combined_digest(FILES) == sha(lines.encode())
    reordered = {k: FILES[k].upper().replace("SHA256:", "") for k in reversed(FILES)}
    assert combined_digest(reordered) == combined_digest(FILES)


@pytest.mark.parametrize(
    ("overrides", "code", "text"),
    [
        ({"weights_digest": None}, "no-digest", f'set weights_digest = "{combined_digest(FILES)}"'),
        ({"revision": None}, "no-revision", "add revision"),
        ({"revision": "  "}, "no-revision", "add revision"),
        ({"files": {}}, "no-file-pins", "needs per-file pins"),
        ({"weights_dir": None}, "no-weights-dir", "needs weights_dir"),
        ({"weights_digest": "sha256:" + "b" * 64}, "digest-mismatch", f"combine to {combined_digest(FILES)}"),
    ],
)
def test_each_refusal(overrides: dict, code: str, text: str) -> None:
    bad = entry(**overrides)
    (refusal,) = check_entry(bad)
    assert refusal.code == code and text in refusal.message
    with pytest.raises(ModelRefused) as info:
        refuse_if_needed(bad)
    assert "model 'm' refused" in str(info.value) and text in str(info.value)
    assert info.value.problems == (refusal.message,) and info.value.model == "m"


def test_hosted_needs_only_digest_and_revision() -> None:
    hosted = entry(kind="hosted", weights_dir=None, files={}, weights_digest="sha256:" + "c" * 64)
    assert check_entry(hosted) == []
    assert check_entry(entry(kind="hosted", weights_dir=None)) == []  # stated pins allowed
    assert [
        r.code for r in check_entry(entry(kind="hosted", weights_dir=None, revision=None, weights_digest=None))
    ] == ["no-digest", "no-revision"]


def test_all_refusals_listed_together() -> None:
    with pytest.raises(ModelRefused) as info:
        refuse_if_needed(entry(weights_digest=None, revision=None, files={}, weights_dir=None))
    assert len(info.value.problems) == 4 and str(info.value).count("\n  - ") == 4


# ------------------------------------------------------------------ keys


def k(*parts: str) -> str:
    # Built from parts so no file in the repository contains a key-shaped literal.
    return "".join(parts)


PROVIDER_KEYS = [
    (k("sk-", "A" * 48), "OpenAI or DeepSeek (sk-)"),
    (k("sk-proj-", "A" * 40), "OpenAI project key (sk-proj-)"),
    (k("sk-svcacct-", "A" * 40), "OpenAI service-account key (sk-svcacct-)"),
    (k("sk-admin-", "A" * 40), "OpenAI admin key (sk-admin-)"),
    (k("sk-ant-", "api03-", "A" * 40), "Anthropic (sk-ant-)"),
    (k("AIza", "B" * 35), "Google (AIza…)"),
    (k("gsk_", "C" * 52), "Groq (gsk_)"),
    (k("xai-", "D" * 80), "xAI (xai-)"),
    (k("hf_", "E" * 34), "Hugging Face (hf_)"),
    (k("sk-or-", "v1-", "F" * 64), "OpenRouter (sk-or-)"),
    (k("r8_", "G" * 37), "Replicate (r8_)"),
    (k("pplx-", "H" * 48), "Perplexity (pplx-)"),
    (k("fw_", "I" * 24), "Fireworks (fw_)"),
    (k("AKIA", "J" * 16), "AWS access key id (AKIA/ASIA)"),
    (k("ASIA", "K" * 16), "AWS access key id (AKIA/ASIA)"),
    (k("ghp_", "L" * 36), "GitHub token (ghp_)"),
    (k("github_pat_", "M" * 70), "GitHub token (github_pat_)"),
    (k("sk-litellm-", "N" * 20), "OpenAI or DeepSeek (sk-)"),  # LiteLLM's shape: refused unless a gateway is declared
]


@pytest.mark.parametrize(("key", "provider"), PROVIDER_KEYS, ids=[p for _, p in PROVIDER_KEYS])
def test_provider_keys_refused_without_echo(key: str, provider: str) -> None:
    model = entry(key_env="COMPARE_TUI_KEY")
    for value in (key, f"  {key}\n", f"Bearer {key}"):
        with pytest.raises(ModelRefused) as info:
            resolve_key(model, {"COMPARE_TUI_KEY": value})
        message = str(info.value)
        assert key not in message and key[:12] not in message.replace(provider, "")
        assert "$COMPARE_TUI_KEY" in message and provider in message
        assert "vk-" not in message and "gateway" in message  # what to do, never the old wrong advice


@pytest.mark.parametrize(
    "key", [k("vk-", "x" * 32), "a" * 40, k("AIza", "short"), k("AKIA", "lower" * 4), "SK-upper-is-not-a-prefix"]
)
def test_virtual_keys_allowed(key: str) -> None:
    assert provider_key_kind(key) is None
    assert resolve_key(entry(key_env="GW_KEY"), {"GW_KEY": f" {key}\n"}) == key


def test_no_key_env_means_no_key() -> None:
    assert resolve_key(entry(), {"COMPARE_TUI_KEY": "vk-1"}) is None


@pytest.mark.parametrize(
    ("environ", "text"),
    [({}, "is not set"), ({"GW_KEY": " "}, "is empty"), ({"GW_KEY": "vk-a b"}, "spaces or control")],
)
def test_unusable_key_env_refused(environ: dict, text: str) -> None:
    with pytest.raises(ModelRefused, match=text) as info:
        resolve_key(entry(key_env="GW_KEY"), environ)
    assert "GW_KEY" in str(info.value)


def test_resolve_key_reads_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GW_KEY", "vk-from-env")
    assert resolve_key(entry(key_env="GW_KEY")) == "vk-from-env"


def test_mask_provider_keys_in_free_text() -> None:
    key = k("gsk_", "Z" * 52)
    assert mask_provider_keys(f"got '{key}' and vk-fine-12345") == "got '[redacted]' and vk-fine-12345"


def test_redact_examples() -> None:
    assert redact("key=abc123 again abc123", ["abc123", ""]) == "key=[redacted] again [redacted]"
    assert redact("abcd", ["abc", "bcd"]) == "[redacted]d"
    assert redact("untouched", []) == "untouched"


@given(st.text(), st.lists(st.text(min_size=1), max_size=4))
def test_redact_leaves_no_secret_outside_markers(text: str, secrets: list[str]) -> None:
    # Every stretch of output between markers is original text that no secret occurs in.
    for segment in redact(text, secrets).split("[redacted]"):
        assert not any(secret in segment for secret in secrets)


# Letters absent from "[redacted]", so a secret can neither sit inside a marker nor span one.
ALNUM = st.text(alphabet="xyz01", min_size=1, max_size=6)


@given(st.lists(st.one_of(ALNUM, st.just(" ")), max_size=30), ALNUM)
def test_redact_removes_every_occurrence(pieces: list[str], secret: str) -> None:
    text = secret.join(pieces) + secret
    out = redact(text, [secret])
    assert secret not in out
    assert out.count("[redacted]") == text.count(secret)


# ------------------------------------------------------------------ verification


@pytest.fixture
def weights(tmp_path: Path) -> tuple[ModelEntry, Path]:
    root = tmp_path / "weights"
    (root / "sub").mkdir(parents=True)
    contents = {"model.gguf": os.urandom(3 * 1024 * 1024 + 7), "sub/tokenizer.json": b"{}"}
    for name, data in contents.items():
        (root / name).write_bytes(data)
    (root / "README.md").write_text("not weights")
    pins = {name: sha(data) for name, data in contents.items()}
    return entry(weights_dir=str(root), files=pins, weights_digest=combined_digest(pins)), root


def test_matching_weights_verified(weights: tuple[ModelEntry, Path]) -> None:
    model, root = weights
    result = verify_weights(model, workers=2)
    assert result.label == VERIFIED == "verified"
    assert result.digests == model.files
    assert result.bytes_hashed == 3 * 1024 * 1024 + 7 + 2


def test_changed_missing_and_extra_files_refused(weights: tuple[ModelEntry, Path]) -> None:
    model, root = weights
    (root / "model.gguf").write_bytes(b"tampered")
    (root / "sub" / "tokenizer.json").unlink()
    (root / "sub" / "deeper").mkdir()
    (root / "sub" / "deeper" / "adapter.SafeTensors").write_bytes(b"x")
    (root / "mmproj.bin").write_bytes(b"y")
    with pytest.raises(ModelRefused) as info:
        verify_weights(model)
    problems = info.value.problems
    assert [p.split(":")[0] for p in problems] == ["missing", "changed", "extra", "extra"]
    assert "sub/tokenizer.json is pinned but not found" in problems[0]
    assert f"model.gguf is pinned as {model.files['model.gguf']} but hashes to {sha(b'tampered')}" in problems[1]
    assert "mmproj.bin is a weights file" in problems[2]
    assert "sub/deeper/adapter.SafeTensors" in problems[3]
    assert "model 'm' refused: its weights do not match the pins" in str(info.value)


def test_missing_weights_dir_refused(weights: tuple[ModelEntry, Path], tmp_path: Path) -> None:
    model, _ = weights
    with pytest.raises(ModelRefused, match="is not a folder"):
        verify_weights(model.model_copy(update={"weights_dir": tmp_path / "absent"}))


def test_unpinned_local_refused_before_hashing(weights: tuple[ModelEntry, Path]) -> None:
    model, _ = weights
    calls = []
    with pytest.raises(ModelRefused, match="per-file pins"):
        verify_weights(model.model_copy(update={"files": {}}), progress=lambda *a: calls.append(a))
    assert calls == []


def test_hosted_is_host_attested_without_hashing() -> None:
    hosted = entry(kind="hosted", weights_dir=None)
    calls = []
    result = verify_weights(hosted, progress=lambda *a: calls.append(a))
    assert result.label == HOST_ATTESTED == "provenance by host attestation, not verified"
    assert calls == [] and result.digests == {}


def test_progress_reports_each_file(weights: tuple[ModelEntry, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    model, _ = weights
    monkeypatch.setattr(verify_module, "PROGRESS_INTERVAL_S", 0.0)
    monkeypatch.setattr(verify_module, "CHUNK_SIZE", 1024 * 1024)
    calls: list[tuple[str, int, int]] = []
    verify_weights(model, progress=lambda *a: calls.append(a))
    big = [c for c in calls if c[0] == "model.gguf"]
    total = 3 * 1024 * 1024 + 7
    assert big[0] == ("model.gguf", 0, total) and big[-1] == ("model.gguf", total, total)
    assert len(big) >= 4 and [c[1] for c in big] == sorted(c[1] for c in big)
    assert ("sub/tokenizer.json", 2, 2) in calls


def test_progress_exception_cancels(weights: tuple[ModelEntry, Path]) -> None:
    model, _ = weights

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        verify_weights(model, progress=stop)


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 4097, 3 * 4096])
def test_hash_file_matches_hashlib(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    assert hash_file(path, chunk_size=4096) == sha(data)


def test_unreadable_file_refused(weights: tuple[ModelEntry, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    model, _ = weights
    real = verify_module.hash_file

    def denied(path, **kwargs):  # root ignores chmod, so simulate the OS refusing the read
        if Path(path).name == "model.gguf":
            raise PermissionError(13, "Permission denied")
        return real(path, **kwargs)

    monkeypatch.setattr(verify_module, "hash_file", denied)
    with pytest.raises(ModelRefused, match="unreadable: model.gguf \\(Permission denied\\)"):
        verify_weights(model)


def test_import_has_no_side_effects_or_ui_deps() -> None:
    code = "import sys, compare_tui.catalogue; print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'tomli_w')))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])},
    )
    assert out.stdout.strip() == "[]"
