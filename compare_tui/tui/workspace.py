"""What the app works on: the store, the catalogue file, the sets folder and the reviewer.

`create_app` builds one `Workspace` and every screen reads from it, so tests hand the app a
temporary store and folders. Methods here do IO and block: call them from worker threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from compare_tui.catalogue import Catalogue, CatalogueError, load_catalogue
from compare_tui.engine.reachability import Reachability
from compare_tui.engine.session import no_catalogue_reason
from compare_tui.goldset import GoldenSet, GoldenSetError, load_golden_set
from compare_tui.store import Store

HealthProbe = Callable[[str], Reachability]
"""endpoint → what its keyless probe found (`engine.reachability`). Blocking; runs in a worker."""


@dataclass(frozen=True, slots=True)
class CatalogueRead:
    """The catalogue, or why there is none (then `catalogue` is None)."""

    catalogue: Catalogue | None
    problem: str | None = None


@dataclass
class Workspace:
    store: Store
    """The one open store of the app (thread-safe)."""
    catalogue_path: Path
    sets_dir: Path
    reviewer: str
    """Who a review is recorded as."""
    probe: HealthProbe
    config_path: Path | None = None
    """The user's config (`[budget]`, the daily eval budget); None: no budget (tests)."""
    flagged: set[tuple[str, str]] = field(default_factory=set)
    """(run id, task id) the user flagged for review in this session."""
    edits: int = 0
    """Moves whenever this session writes to the store (a verdict, a run), so screens below
    know to read again when they come back."""
    _sets: dict[str, GoldenSet] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def read_catalogue(self) -> CatalogueRead:
        path = self.catalogue_path
        if not path.exists():
            return CatalogueRead(None, no_catalogue_reason(path))
        try:
            return CatalogueRead(load_catalogue(path))
        except CatalogueError as exc:
            return CatalogueRead(None, str(exc))

    def golden_set(self, path: str | Path) -> GoldenSet:
        """The golden set at `path`, loaded once per session; `GoldenSetError` when it cannot be."""
        key = str(path)
        with self._lock:
            cached = self._sets.get(key)
        if cached is not None:
            return cached
        loaded = load_golden_set(Path(path))
        with self._lock:
            self._sets[key] = loaded
        return loaded

    def forget_sets(self) -> None:
        """Drop cached golden sets (the Home screen's refresh reads them again)."""
        with self._lock:
            self._sets.clear()

    def golden_set_or_none(self, path: str | Path) -> tuple[GoldenSet | None, str | None]:
        """(set, None) or (None, the reason it cannot be read)."""
        if not path:
            return None, "the run did not record where its golden set is"
        try:
            return self.golden_set(path), None
        except GoldenSetError as exc:
            return None, str(exc)
        except OSError as exc:
            return None, f"{path}: {exc.strerror or exc}"
