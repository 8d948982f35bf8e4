"""The Models screen driven through Pilot: reached from Home, the palette and Help; the same
readiness facts `models list` prints; `v`/`V` verify in a worker with progress; a changed byte
is named; leaving mid-hash cancels; a missing or malformed catalogue is said, not crashed on."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from compare_tui.catalogue import combined_digest
from compare_tui.cli import main
from compare_tui.tui.app import create_app
from compare_tui.tui.screens.help import _sections
from compare_tui.tui.screens.home import HomeScreen
from compare_tui.tui.screens.models import HashProgress, ModelsScreen, VerifyCancelled
from tests.support.home_app import settle
from tests.tui.test_tui_data import build_store, fixed_probe

HOSTED_COST = """[model.cost]
basis = "token_price"
usd_per_mtok_input = 1.0
usd_per_mtok_output = 2.0
captured = "2026-11-30"
source = "https://example.com/pricing"
"""


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _local(name: str, folder: Path, pins: dict[str, str]) -> str:
    files = "\n".join(f'"{file}" = "{digest}"' for file, digest in pins.items())
    return f"""[[model]]
name = "{name}"
kind = "local"
endpoint = "http://127.0.0.1:9/v1"
model = "{name}"
revision = "v1"
weights_digest = "{combined_digest(pins)}"
weights_dir = "{folder.name}"
[model.files]
{files}
[model.cost]
basis = "hardware"
usd_per_hour = 0.5
"""


def write_models_catalogue(root: Path) -> Path:
    """`root/models.toml` with four entries, weights folders beside it (fixed bytes, so fixed
    digests): `tiny` (two files, pins match), `changed` (one file whose pin does not match),
    `hosted-one` (host attestation) and `unpinned` (refused: no digest, revision or cost)."""
    tiny, changed = root / "weights", root / "changed"
    tiny.mkdir()
    changed.mkdir()
    (tiny / "tiny.gguf").write_bytes(b"GGUF" + bytes(range(256)) * 40)
    (tiny / "part.safetensors").write_bytes(b"st" * 500)
    (changed / "model.gguf").write_bytes(b"GGUF" + b"\x01" * 2048)
    path = root / "models.toml"
    path.write_text(
        "\n".join(
            [
                "# the team's catalogue",
                _local(
                    "tiny",
                    tiny,
                    {"tiny.gguf": _sha((tiny / "tiny.gguf").read_bytes()), "part.safetensors": _sha(b"st" * 500)},
                ),
                _local("changed", changed, {"model.gguf": _sha(b"GGUF" + b"\x02" * 2048)}),
                (
                    '[[model]]\nname = "hosted-one"\nkind = "hosted"\nendpoint = "http://127.0.0.1:9/v1"\nmodel = "prod"\n'
                    f'revision = "2026-01-01"\nweights_digest = "sha256:{"0" * 64}"\n{HOSTED_COST}'
                ),
                '[[model]]\nname = "unpinned"\nkind = "hosted"\nendpoint = "http://127.0.0.1:9/v1"\nmodel = "u"\n',
            ]
        )
    )
    return path


@pytest.fixture
def models_app(tmp_path, monkeypatch):
    """An app over the usual store and the catalogue above, run from the catalogue's folder (so
    its paths are shown relative to it, as a user in that folder would type them)."""
    store, sets = build_store(tmp_path)
    catalogue = write_models_catalogue(tmp_path)
    monkeypatch.chdir(tmp_path)

    def make():
        return create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=fixed_probe)

    yield make, catalogue
    store.close()


def column(table: DataTable, name: str) -> dict[str, str]:
    index = [str(c.label) for c in table.ordered_columns].index(name)
    return {str(table.get_row_at(r)[0]): str(table.get_row_at(r)[index]) for r in range(table.row_count)}


def facts(screen: ModelsScreen) -> str:
    return str(screen.query_one("#model-facts-text", Static).render())


async def test_m_on_home_opens_the_models_screen_with_what_models_list_says(models_app, capsys):
    make, catalogue = models_app
    assert main(["models", "list", "--json", "--models", str(catalogue)]) == 0
    listed = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    async with make().run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ModelsScreen)
        table = screen.query_one("#catalogue-table", DataTable)
        run = column(table, "run")
        assert list(run) == list(listed)  # file order
        for name, row in listed.items():
            assert run[name] == ("✓ ready" if row["ready"] else f"✗ refused ({len(row['reasons'])})")
        assert column(table, "cost basis")["hosted-one"] == listed["hosted-one"]["cost"]
        assert column(table, "weights") == dict.fromkeys(listed, "not checked")
        await pilot.press("down", "down", "down")
        text = facts(screen)
        assert text.startswith("unpinned · hosted")
        for reason in listed["unpinned"]["reasons"]:  # every reason, word for word
            assert f"  - {reason}" in text
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(pilot.app.screen, HomeScreen)


async def test_enter_on_homes_models_tab_opens_the_screen_on_that_model(models_app):
    make, _ = models_app
    async with make().run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("2", "down", "down", "enter")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ModelsScreen)
        assert screen._selected().entry.name == "hosted-one"
        assert facts(screen).startswith("hosted-one · hosted")


async def test_the_palette_and_help_offer_the_models_screen(models_app):
    make, _ = models_app
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        commands["Models"].callback()
        await settle(pilot)
        assert isinstance(app.screen, ModelsScreen)
    sections = dict(_sections(app.BINDINGS))
    assert {b.key for b in sections["Models"]} >= {"v", "V", "g", "escape"}
    assert "m" in {b.key for b in sections["Home"]}


async def test_v_verifies_the_highlighted_model_and_names_a_changed_file(models_app):
    make, catalogue = models_app
    async with make().run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        screen = pilot.app.screen
        table = screen.query_one("#catalogue-table", DataTable)
        await pilot.press("v")
        await settle(pilot)
        assert column(table, "weights")["tiny"] == "✓ verified"
        assert column(table, "weights")["changed"] == "not checked"
        assert "weights: ✓ verified, 2 file(s)" in facts(screen)
        assert not screen.query_one("#verify-progress").display  # shown only while hashing

        # One byte of tiny's weights changes: verifying again names the file and the fix.
        weights = catalogue.parent / "weights" / "tiny.gguf"
        data = bytearray(weights.read_bytes())
        data[100] ^= 0xFF
        weights.write_bytes(bytes(data))
        await pilot.press("v")
        await settle(pilot)
        assert column(table, "weights")["tiny"] == "✗ refused (1)"
        text = facts(screen)
        assert "changed: tiny.gguf is pinned as" in text
        assert "compare-tui models verify tiny" in text


async def test_V_verifies_every_model_one_after_another(models_app):
    make, _ = models_app
    async with make().run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        screen = pilot.app.screen
        await pilot.press("V")
        await settle(pilot)
        assert column(screen.query_one("#catalogue-table", DataTable), "weights") == {
            "tiny": "✓ verified",
            "changed": "✗ refused (1)",
            "hosted-one": "host attested",
            "unpinned": "✗ refused (2)",
        }
        assert screen.queued == []
        await pilot.press("down")
        assert "changed: model.gguf is pinned as" in facts(screen)


class BlockingProgress(HashProgress):
    """Holds the first progress call until released: the test acts while a hash is under way."""

    def __init__(self, cancel: threading.Event) -> None:
        super().__init__(cancel)
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls: list[tuple[str, int, int]] = []

    def __call__(self, name: str, done: int, total: int) -> None:
        self.calls.append((name, done, total))
        if not self.entered.is_set():
            self.entered.set()
            self.release.wait(10)
        super().__call__(name, done, total)


async def test_progress_is_shown_while_hashing_and_leaving_cancels_the_hash(models_app):
    make, _ = models_app
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        screen = app.screen
        screen.progress = BlockingProgress(screen._cancel)
        await pilot.press("v")
        assert screen.progress.entered.wait(10)
        await pilot.pause()
        assert screen.query_one("#verify-progress").display
        assert column(screen.query_one("#catalogue-table", DataTable), "weights")["tiny"].startswith("hashing")
        await pilot.press("v")  # one verification at a time
        await pilot.pause()
        assert any("Already verifying tiny" in n.message for n in app._notifications)
        await pilot.press("escape")
        await pilot.pause()
        screen.progress.release.set()
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        # Cancelled: no file was hashed to its end (each would report done == total), and the
        # worker ended quietly, not as a failure.
        assert screen.progress.calls and all(done < total for _, done, total in screen.progress.calls)
        assert screen.outcomes == {}
        assert not any(n.severity == "error" for n in app._notifications)


def test_hash_progress_sums_bytes_per_model_and_stops_when_cancelled():
    cancel = threading.Event()
    progress = HashProgress(cancel)
    progress.start("m")
    progress("a.gguf", 0, 100)
    progress("b.gguf", 10, 50)
    progress("a.gguf", 60, 100)
    assert progress.snapshot() == ("m", 70, 150)
    progress.start("n")
    assert progress.snapshot() == ("n", 0, 0)
    cancel.set()
    with pytest.raises(VerifyCancelled):
        progress("a.gguf", 1, 100)


@pytest.mark.parametrize(
    "content, expected",
    [
        (None, "no model catalogue at"),
        ("[[model]\n", "not valid TOML"),
    ],
)
async def test_a_missing_or_malformed_catalogue_is_said_on_the_screen(tmp_path, content, expected):
    store, sets = build_store(tmp_path)
    path = tmp_path / "models.toml"
    if content is not None:
        path.write_text(content)
    try:
        app = create_app(store=store, catalogue_path=path, sets_dir=sets, reviewer="tester", probe=fixed_probe)
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            app.open_models()
            await settle(pilot)
            problem = app.screen.query_one("#models-problem", Static)
            assert problem.display and expected in str(problem.render())
            assert app.screen.query_one("#catalogue-table", DataTable).row_count == 0
            await pilot.press("v")  # nothing to verify: said, not crashed on
            await pilot.pause()
            assert any("No model to verify" in n.message for n in app._notifications)
    finally:
        store.close()
