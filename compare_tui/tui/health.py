"""Endpoint health for the Home screen: the engine's own reachability probe (one quick GET of
`<endpoint>/models`, no key, no proxy), so the Models tab and a run's pre-flight check agree."""

from __future__ import annotations

from compare_tui.engine.reachability import CHECKING, TIMEOUT_S, Health, Reachability, health_for, probe_endpoint

__all__ = ["CHECKING", "TIMEOUT_S", "Health", "Reachability", "health_for", "probe_endpoint"]
