"""The catalogue's exceptions. Each message is written for a user: what was wrong, where,
and what to do. None of them ever carries key material."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from compare_tui.errors import CompareTuiError


class CatalogueError(CompareTuiError):
    """A catalogue file that cannot be used: unreadable, not TOML, or invalid entries.

    `problems` holds one line per problem (each names the file, the entry, the field and
    the fix); `str(error)` is all of them, ready to print."""

    def __init__(self, path: Path | None, problems: Sequence[str]) -> None:
        self.path = path
        self.problems: tuple[str, ...] = tuple(problems)
        where = f"model catalogue {path}" if path is not None else "model catalogue"
        if len(self.problems) == 1:
            text = self.problems[0]
        else:
            text = f"{where}: {len(self.problems)} problems\n" + "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(text)


class UnknownModel(CatalogueError, KeyError):
    """`Catalogue.get` was asked for a name the catalogue does not have. A `KeyError` too,
    so mapping-style callers can catch it; `str()` is the plain message, unquoted."""

    def __init__(self, name: str, path: Path | None, message: str) -> None:
        self.name = name
        super().__init__(path, [message])

    def __str__(self) -> str:
        # KeyError.__str__ would repr() the message, wrapping it in quotes.
        return str(self.args[0])


class ModelRefused(CompareTuiError):
    """A model that must not be run: missing pins, weights that do not match them, or a key
    that looks like a provider API key. `problems` lists each reason separately."""

    def __init__(
        self,
        reason: str,
        *,
        model: str | None = None,
        problems: Sequence[str] = (),
        fix: str | None = None,
        detail: str | None = None,
    ) -> None:
        self.reason = reason
        self.model = model
        self.detail = reason if detail is None else detail
        """The reason without the model's name, for a caller that names the model itself."""
        self.problems: tuple[str, ...] = tuple(problems) or (reason,)
        self.fix = fix
        """The command that mends it, when known (also part of `reason`)."""
        super().__init__(reason)

    @classmethod
    def about(cls, model: str, detail: str) -> ModelRefused:
        """`model 'NAME': detail`, keeping `detail` apart (`RunRefusedError` names the model itself)."""
        return cls(f"model {model!r}: {detail}", model=model, detail=detail)

    @classmethod
    def listing(cls, model: str, summary: str, problems: Sequence[str], *, fix: str | None = None) -> ModelRefused:
        """One refusal naming the model, with each problem on its own line, and `fix` (the
        command that mends it) last."""
        if len(problems) == 1:
            reason = f"model {model!r} refused: {summary}: {problems[0]}"
            if fix:
                reason += f"; fix: {fix}"
        else:
            reason = f"model {model!r} refused: {summary}:\n" + "\n".join(f"  - {p}" for p in problems)
            if fix:
                reason += f"\n  fix: {fix}"
        return cls(reason, model=model, problems=problems, fix=fix)


class CatalogueEditError(CatalogueError):
    """`models add`/`remove` could not do what was asked; nothing was written. `str()` is
    one line: what was wrong and what to do."""

    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(path, [message])


class EndpointProbeError(CatalogueEditError):
    """The endpoint could not be probed: unreachable, not OpenAI-compatible, or it does not
    serve the model. Nothing was written."""


class ModelNotServed(EndpointProbeError):
    """The endpoint lists its models and the one asked for is not among them (`ids`);
    `owners` are the listing's `owned_by` values (llama.cpp's is "llamacpp")."""

    def __init__(self, message: str, ids: list[str], owners: frozenset[str] = frozenset()) -> None:
        super().__init__(message)
        self.ids = ids
        self.owners = owners
