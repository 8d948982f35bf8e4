"""Pilot tests for rough edges a new user hit (issue 22): the theme kept at restart, and unreadable
preferences. Each reproduces the key sequence of the report first, then checks what the screen
does now."""

from __future__ import annotations

from compare_tui.tui.app import create_app
from tests.support.home_app import SIZE, settle
from tests.tui.test_tui_data import build_store, fixed_probe, write_catalogue

# ------------------------------------------------------------------ the theme is kept at restart


async def test_a_theme_chosen_in_the_app_is_kept_at_restart(tmp_path, monkeypatch):
    from compare_tui.paths import user_config_path

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    config = user_config_path()
    assert config == tmp_path / "config" / "compare-tui" / "config.toml"
    store, sets = build_store(tmp_path)
    catalogue = write_catalogue(tmp_path / "models.toml")

    def make(theme=None):
        return create_app(
            store=store,
            catalogue_path=catalogue,
            sets_dir=sets,
            reviewer="tester",
            probe=fixed_probe,
            theme=theme,
            config_path=config,
        )

    with store:
        first = make()
        async with first.run_test(size=SIZE) as pilot:
            await settle(pilot)
            default = first.theme
            first.theme = "compare-light" if default != "compare-light" else "compare-dark"
            chosen = first.theme
            await settle(pilot)
        assert f'theme = "{chosen}"' in config.read_text()
        again = make()
        async with again.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert again.theme == chosen != default
        assert make(theme="high-contrast").theme != chosen  # --theme wins over the remembered one


def test_unreadable_preferences_are_a_problem_not_a_crash(tmp_path):
    from compare_tui.tui.preferences import read_preferences, save_theme

    path = tmp_path / "config.toml"
    path.write_text("# mine\ntheme = \n")
    assert read_preferences(path).problem and read_preferences(path).theme is None
    path.write_text("# my note\nother = 1\n")
    assert save_theme(path, "compare-light") is None
    text = path.read_text()
    assert "# my note" in text and "other = 1" in text and read_preferences(path).theme == "compare-light"
