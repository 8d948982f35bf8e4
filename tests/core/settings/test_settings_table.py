"""Every `COMPARE_TUI_*` variable the code names is a row of `compare_tui.settings.ENVIRONMENT`,
and docs/settings.md shows that table as `settings_table()` writes it."""

from __future__ import annotations

import re
from pathlib import Path

from compare_tui.settings import ENVIRONMENT, settings_table

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
CHILD_CONTRACT = ("scoring/command.py", "scoring/sandbox.py", "local/traffic_log.py")
"""Where compare-tui *sets* variables for a process of its own making (a command scorer; the
gateway's traffic-log callback, which runs in LiteLLM's interpreter): that child's inputs, not
settings."""
NAME = re.compile(r"COMPARE_TUI_[A-Z][A-Z_]*[A-Z]")


def named_in_code() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (ROOT / "compare_tui").rglob("*.py"):
        module = path.relative_to(ROOT / "compare_tui").as_posix()
        if module in CHILD_CONTRACT or module == "settings.py":
            continue
        for name in NAME.findall(path.read_text(encoding="utf-8")):
            found.setdefault(name, set()).add(module)
    return found


def test_every_variable_the_code_names_is_in_the_one_table():
    listed = {v.name for v in ENVIRONMENT}
    assert {name: sorted(m) for name, m in named_in_code().items() if name not in listed} == {}
    assert listed <= set(named_in_code())  # and the table lists nothing the code no longer names


def test_the_docs_show_the_table_as_written():
    page = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    shown = page.split("<!-- settings table: compare_tui/settings.py -->\n", 1)[1].split("<!-- end of", 1)[0]
    assert shown == settings_table()


def test_no_module_but_settings_reads_a_compare_tui_variable_itself():
    read = re.compile(r"environ(?:\.get\(|\[)\s*[\"']COMPARE_TUI_")
    found = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "compare_tui").rglob("*.py")
        if read.search(path.read_text(encoding="utf-8")) and path.name != "settings.py"
    ]
    assert found == []


def test_the_settings_are_read_and_checked_once():
    from compare_tui.settings import Settings, SettingsError

    read = Settings.from_environ({"COMPARE_TUI_STORE": "~/runs.sqlite", "COMPARE_TUI_SCORER_WAIT_S": "2.5"})
    assert read.store == Path("~/runs.sqlite").expanduser() and read.scorer_wait_s == 2.5 and read.models is None
    assert Settings.from_environ({"COMPARE_TUI_STORE": "  "}).store is None  # empty: unset
    for name, value in (("COMPARE_TUI_SCORER_WAIT_S", "-1"), ("COMPARE_TUI_SCORERS", "cloud")):
        try:
            Settings.from_environ({name: value})
        except SettingsError as exc:
            assert str(exc).startswith(f"{name}={value!r}: give ")
        else:
            raise AssertionError(f"{name}={value} was accepted")


def test_the_command_line_refuses_a_bad_variable_before_any_command(monkeypatch, capsys, tmp_path):
    from compare_tui.cli import main

    monkeypatch.setenv("COMPARE_TUI_SCORER_WAIT_S", "soon")
    monkeypatch.setenv("COMPARE_TUI_STORE", str(tmp_path / "runs.sqlite"))
    assert main(["runs", "list"]) == 2
    assert capsys.readouterr().err == (
        "compare-tui: COMPARE_TUI_SCORER_WAIT_S='soon': give the seconds a scorer may wait to be placed (e.g. 300)\n"
    )
    assert not (tmp_path / "runs.sqlite").exists()


def test_a_flag_wins_over_the_variable_and_the_variable_over_the_config_file(tmp_path, monkeypatch):
    from compare_tui.paths import store_path
    from compare_tui.settings import current

    config = tmp_path / "config" / "compare-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('theme = "compare-light"\n\n[settings]\nstore = "from-config.sqlite"\nscorer_wait_s = 600\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("COMPARE_TUI_STORE", raising=False)
    monkeypatch.delenv("COMPARE_TUI_SCORER_WAIT_S", raising=False)
    assert store_path() == Path("from-config.sqlite") and current().scorer_wait_s == 600
    monkeypatch.setenv("COMPARE_TUI_STORE", "from-env.sqlite")
    assert store_path() == Path("from-env.sqlite")
    assert store_path("from-flag.sqlite") == Path("from-flag.sqlite")


def test_a_config_file_key_it_does_not_know_is_refused_before_any_command(tmp_path, monkeypatch, capsys):
    from compare_tui.cli import main

    config = tmp_path / "compare-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[settings]\nstor = 'x.sqlite'\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert main(["runs", "list"]) == 2
    assert capsys.readouterr().err.startswith(
        "compare-tui: the config file's [settings] has no key 'stor': its keys are"
    )
