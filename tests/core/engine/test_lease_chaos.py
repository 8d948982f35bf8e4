"""Lease chaos, test-tier size (issue 35): `bench/soak/lease_chaos.py` with 15 random kills
(SIGKILL, SIGTERM, SIGINT) while three resumers keep trying to execute one run. The script
asserts, per round, that requests received per (task, attempt) are 1 except where a kill fell
between a request and its stored answer (each extra an `unknown` or `cancelled` audit row),
that audit rows ≥ requests received, that no attempt is lost and that the final report equals
an uninterrupted run's; here its figures are read back. The benchmark run uses ≥ 1,000 kills.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.core.engine.test_chaos_helpers import ROOT, cli_env


def test_random_kills_among_three_resumers_lose_nothing_and_audit_every_request(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "soak" / "lease_chaos.py"), "--kills", "15", "--tasks", "100", "--json"],
        cwd=ROOT,
        env=cli_env(tmp_path / "state"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout)
    assert figures["kills"] >= 15
    assert figures["attempts lost"] == 0
    assert figures["reports identical to the uninterrupted run's"] == figures["rounds"] >= 1
    assert figures["audit rows"] >= figures["requests received"]
    extra = figures["extra requests (a kill between request and stored answer)"]
    assert figures.get("audit rows unknown", 0) + figures.get("audit rows cancelled", 0) >= extra
    assert figures["tasks asked once"] + extra >= figures["tasks"]
