"""Write a small JSONL log of complete agent runs, in the plain shape `compare-tui sample` reads.

Each run is a weather agent answering one question with tools: `get_weather(city)` and, for
a question in Fahrenheit, `to_fahrenheit(celsius)`, then a final answer (the number only).
Every assistant step is one record (`request` = the history and tools the agent saw,
`response` = its action), as a gateway logs an agent. The log is deterministic (fixed
timestamps), so `compare-tui sample --whole-runs` on it gives the same set every time.

    python bench/agent_replay/make_agent_log.py bench/agent_replay/agent-log.jsonl
    compare-tui sample bench/agent_replay/agent-log.jsonl --whole-runs --text-scorer exact \\
        --out /tmp/agent-replay
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

START = 1_764_892_800  # 2025-12-05T00:00:00Z
SYSTEM = (
    "You are a weather agent. Use the tools to find the answer, one call at a time. "
    "When you know it, answer with the number only."
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current temperature in Celsius for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "to_fahrenheit",
            "description": "Convert a temperature from Celsius to Fahrenheit.",
            "parameters": {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]},
        },
    },
]
# (city, celsius, in Fahrenheit?)
QUESTIONS = [
    ("Paris", 20, False),
    ("Oslo", 5, True),
    ("Cairo", 35, False),
    ("Lima", 15, True),
    ("Tokyo", 10, True),
    ("Madrid", 25, False),
]


def _call(run: int, step: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{run}_{step}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def agent_run(run: int, city: str, celsius: int, fahrenheit: bool) -> list[dict[str, Any]]:
    unit = "Fahrenheit" if fahrenheit else "Celsius"
    history: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"What is the temperature in {city} in {unit}?"},
    ]
    actions = [(_call(run, 0, "get_weather", {"city": city}), {"city": city, "celsius": celsius})]
    answer = celsius
    if fahrenheit:
        answer = round(celsius * 9 / 5 + 32)
        actions.append((_call(run, 1, "to_fahrenheit", {"celsius": celsius}), {"fahrenheit": answer}))
    actions.append(({"role": "assistant", "content": str(answer)}, None))
    records = []
    for step, (action, result) in enumerate(actions):
        records.append(
            {
                "request": {
                    "model": "gpt-4o-2024-08-06",
                    "messages": list(history),
                    "tools": TOOLS,
                    "tool_choice": "auto",
                },
                "response": {
                    "model": "gpt-4o-2024-08-06",
                    "choices": [{"message": action, "finish_reason": "tool_calls" if result is not None else "stop"}],
                },
                "timestamp": START + run * 3600 + step * 4,
                "conversation_id": f"weather-{run:02d}",
            }
        )
        history.append(action)
        if result is not None:
            history.append(
                {"role": "tool", "tool_call_id": action["tool_calls"][0]["id"], "content": json.dumps(result)}
            )
    return records


def main(out: str) -> None:
    records = [r for run, question in enumerate(QUESTIONS) for r in agent_run(run, *question)]
    Path(out).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    print(f"{len(QUESTIONS)} runs, {len(records)} steps -> {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "agent-log.jsonl")
