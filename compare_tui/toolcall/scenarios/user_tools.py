"""Scenarios for the user's own tools. There is no answer key for them, so only what holds
for any correct call is checked: for each tool, one forced (named) call checked against its
own schema, and one `tool_choice: auto` call with a prompt aimed at that tool (a stack whose
parser only works when the call is forced answers these with text), each offering that tool
alone (so a tool a server refuses spoils only the scenarios that offer it); then one `required`
scenario with every tool offered, and one irrelevance scenario (chit-chat: no call) with every
tool offered. `skip_invalid` leaves out the tools whose schema servers refuse
(`ToolsFile.refused`).
"""

from __future__ import annotations

from typing import Any

from compare_tui.toolcall.scenarios.scenario import CallPattern, Expectation, Scenario, ToolSpec
from compare_tui.toolcall.tools.file import ToolsFile


def tool_specs(tools: ToolsFile, *, skip_invalid: bool = False) -> tuple[ToolSpec, ...]:
    left_out = tools.refused if skip_invalid else {}
    return tuple(
        ToolSpec(t.name, t.wire_name, t.description, t.parameters) for t in tools.tools if t.name not in left_out
    )


def user_scenarios(tools: ToolsFile, *, skip_invalid: bool = False) -> tuple[Scenario, ...]:
    """`user.named:<tool>` and `user.auto:<tool>` per tool, then `user.required` and
    `user.irrelevance` (none of them when `skip_invalid` leaves no tool)."""
    specs = tool_specs(tools, skip_invalid=skip_invalid)
    if not specs:
        return ()
    out = []
    numbers = {t.name: n for n, t in enumerate(tools.tools, 1)}  # ids stay the same with tools left out
    for spec in specs:
        number = numbers[spec.name]
        prompt = (
            f"Call the {spec.wire_name} tool now. Use plausible example values for its parameters; "
            "do not ask me for them."
        )
        out.append(
            _aimed_at(
                spec,
                f"T{number:02d}",
                "named",
                f"A forced call to {spec.name}, checked against its own schema",
                prompt,
                {"type": "function", "function": {"name": spec.wire_name}},
                "arguments that do not fit the tool's schema; a named choice ignored",
            )
        )
        out.append(auto_scenario(spec, number))
    out.append(
        Scenario(
            id="T-required",
            name="user.required",
            category="user",
            title="tool_choice required with all your tools",
            tools=specs,
            messages=(
                {"role": "user", "content": "Pick the tool that fits best and call it with plausible example values."},
            ),
            expect=Expectation(min_calls=1),
            tool_choice="required",
            catches="required ignored; invalid arguments for your schemas",
            user_tools=True,
        )
    )
    out.append(
        Scenario(
            id="T-irrelevance",
            name="user.irrelevance",
            category="user",
            title="Chit-chat with all your tools offered",
            tools=specs,
            messages=({"role": "user", "content": "Write a haiku about autumn."},),
            expect=Expectation(max_calls=0, content_not_empty=True),
            tool_choice="auto",
            catches="calling one of your tools when none is needed",
            user_tools=True,
        )
    )
    return tuple(out)


def auto_scenario(spec: ToolSpec, number: int) -> Scenario:
    """`user.auto:<tool>`: the tool offered with `tool_choice: auto` and a request it is made
    for (its own description), so the model must choose to call it and the server must parse
    a call it was not forced to make."""
    purpose = (spec.description or "").strip().rstrip(".")
    aim = f"I need this done: {purpose}." if purpose else f"I need what the {spec.wire_name} tool does."
    prompt = f"{aim} Use your {spec.wire_name} tool for it now, with plausible example values; do not ask me for them."
    return _aimed_at(
        spec,
        f"T{number:02d}-auto",
        "auto",
        f"A request aimed at {spec.name} with tool_choice auto: the model must choose to call it",
        prompt,
        "auto",
        "a call only parsed when forced (auto answered with text); arguments that do not fit the schema",
    )


def _aimed_at(spec: ToolSpec, id_: str, kind: str, title: str, prompt: str, choice: Any, catches: str) -> Scenario:
    """A scenario offering `spec` alone and expecting exactly one call of it."""
    return Scenario(
        id=id_,
        name=f"user.{kind}:{spec.name}",
        category="user",
        title=title,
        tools=(spec,),
        messages=({"role": "user", "content": prompt},),
        expect=Expectation(min_calls=1, max_calls=1, match=(CallPattern(spec.name),)),
        tool_choice=choice,
        catches=catches,
        user_tools=True,
    )
