"""Scenarios for the user's own tools. There is no answer key for them, so only what holds
for any correct call is checked: for each tool, one forced (named) call checked against its
own schema, offering that tool alone (so a tool a server refuses spoils only the scenarios
that offer it); then one `required` scenario with every tool offered, and one irrelevance
scenario (chit-chat: no call) with every tool offered. `skip_invalid` leaves out the tools
whose schema servers refuse (`ToolsFile.refused`).
"""

from __future__ import annotations

from compare_tui.toolcall.scenarios.scenario import CallPattern, Expectation, Scenario, ToolSpec
from compare_tui.toolcall.tools.file import ToolsFile


def tool_specs(tools: ToolsFile, *, skip_invalid: bool = False) -> tuple[ToolSpec, ...]:
    left_out = tools.refused if skip_invalid else {}
    return tuple(
        ToolSpec(t.name, t.wire_name, t.description, t.parameters) for t in tools.tools if t.name not in left_out
    )


def user_scenarios(tools: ToolsFile, *, skip_invalid: bool = False) -> tuple[Scenario, ...]:
    """`user.named:<tool>` per tool, then `user.required` and `user.irrelevance` (none of
    them when `skip_invalid` leaves no tool)."""
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
            Scenario(
                id=f"T{number:02d}",
                name=f"user.named:{spec.name}",
                category="user",
                title=f"A forced call to {spec.name}, checked against its own schema",
                tools=(spec,),
                messages=({"role": "user", "content": prompt},),
                expect=Expectation(min_calls=1, max_calls=1, match=(CallPattern(spec.name),)),
                tool_choice={"type": "function", "function": {"name": spec.wire_name}},
                catches="arguments that do not fit the tool's schema; a named choice ignored",
                user_tools=True,
            )
        )
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
