"""An engine observer that stops a bundled model's llama-server part-way through a run."""

from __future__ import annotations

import threading

from compare_tui import local
from compare_tui.engine.events import AttemptFinished


class StopServerMidRun:
    """Stops `model`'s server (`local down`) once `after` attempts have finished."""

    def __init__(self, model: str, after: int) -> None:
        self.model, self.after = model, after
        self.finished = 0
        self.stopper: threading.Thread | None = None

    def on_event(self, event: object) -> None:
        if isinstance(event, AttemptFinished):
            self.finished += 1
            if self.finished == self.after and self.stopper is None:
                # `local down` blocks until the process is gone: not on the engine's loop.
                self.stopper = threading.Thread(target=local.down, args=([self.model],))
                self.stopper.start()
