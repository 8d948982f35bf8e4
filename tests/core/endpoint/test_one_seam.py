"""Every HTTP client is built in `endpoint/` (ARCHITECTURE.md: "the one seam to a model
endpoint"): no other module constructs one, so no request escapes its proxy, redirect, TLS and
key rules."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "compare_tui"
BUILDS_A_CLIENT = re.compile(r"\b(httpx\.(Async)?Client|aiohttp\.ClientSession|ClientSession|HTTPS?Connection)\(")


def test_no_module_outside_endpoint_builds_an_http_client():
    builders = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] != "endpoint"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if BUILDS_A_CLIENT.search(line)
    ]
    assert builders == [], "build it with endpoint.client (chat_client or probe_client)"
