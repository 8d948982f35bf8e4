"""The store's schema as a list of forward migrations, and how an existing file is recognised.

A store is ours when it has a `meta` table whose `app` row says `compare-tui`; its
`schema_version` row says which migrations it has had. A new store runs every migration from
an empty file, so the path that upgrades old stores is the same path that creates new ones
and is exercised by every test.

History (never edit a shipped migration; append a new one):
  v1  runs and attempts: the minimum a run needs to be resumed.
  v2  GPU figures and comparison link on runs, isolation and server timings on attempts;
      the request audit log, human reviews and comparisons.
  v3  experiments: named configurations only (arms × repeats); their figures are computed
      from the runs each time they are read, so nothing else is stored for them.
  v4  judges: judgings (judge model + rubric over a run or a pair of runs), one judgement
      per judge call (failed calls too), and people's labels on pairs of answers.
  v5  the judge's reply form on judgings (`text`, or `structured`: a JSON verdict the server was
      asked to constrain the reply to).
  v6  tool-call runs: the user's own (`toolcall_runs`/`toolcall_results`) and `--publishable`
      ones (`toolcall_published_runs`/`toolcall_published_results`), created until now by
      `toolcall/results/storage.py` on first use (hence IF NOT EXISTS: a v5 store may hold them, with
      rows); `audit.toolcall_run_id`, so each tool-call request is a row of the audit ledger.
  v7  a comparison's named baseline; `decisions` (promotions).
  v8  `bundles`: each `publish` of a read-only HTML bundle (what, where, the page's sha256).
  v9  rubric grades on the 1–5 scale (`compare-tui grade`): a judging of kind `scale` whose
      judgements carry the `grade` and the graded `attempt`.
  v10 `runs.task_inputs` (each task's input digest as sent) and `runs.rescore` (a rescored run's
      source and what changed).
  v11 `runs.serving`: the server's serving fingerprint at each start of a run (new or resumed).
  v12 `comparisons.margin_pp`: the verdict's margin, recorded before the data.
  v13 `run_leases`: who executes a run now (one row per run being executed; holder host, pid,
      process start, token, heartbeat), `lease_takeovers` (each stale lease taken over), and
      `audit.state`: a request's row is written `sent` before it goes out and completed `done`
      after; `unknown` when its sender died first, `cancelled` when it stopped reading.
  v14 `attempts.cached_tokens`.
  then `comparisons.sequential`: a `--stop-when-settled` comparison's seed and task order.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

APP_MARKER = "compare-tui"

_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    goldset_id TEXT NOT NULL,
    goldset_name TEXT NOT NULL DEFAULT '',
    goldset_version TEXT NOT NULL DEFAULT '',
    goldset_digest TEXT NOT NULL DEFAULT '',
    goldset_path TEXT NOT NULL DEFAULT '',
    model_name TEXT NOT NULL,
    model_entry TEXT NOT NULL DEFAULT '{}',
    provenance TEXT,
    cost_basis TEXT,
    settings TEXT NOT NULL DEFAULT '{}',
    environment TEXT NOT NULL DEFAULT '{}',
    task_count INTEGER NOT NULL DEFAULT 0,
    error TEXT
);
CREATE TABLE attempts (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    task_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    answer_text TEXT NOT NULL DEFAULT '',
    tool_calls TEXT NOT NULL DEFAULT '[]',
    reasoning TEXT,
    score_detail TEXT NOT NULL DEFAULT '',
    score_data TEXT NOT NULL DEFAULT '{}',
    error_class TEXT,
    error TEXT,
    ttft_ms REAL,
    e2e_ms REAL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    usage_missing INTEGER NOT NULL DEFAULT 0,
    started_at TEXT,
    finished_at TEXT,
    retries INTEGER NOT NULL DEFAULT 0,
    finish_reason TEXT
);
CREATE INDEX attempts_by_run ON attempts(run_id, task_id, attempt);
CREATE INDEX runs_by_created ON runs(created_at);
"""

_V2 = """
ALTER TABLE runs ADD COLUMN gpu TEXT;
ALTER TABLE runs ADD COLUMN comparison_id TEXT;
ALTER TABLE attempts ADD COLUMN isolation TEXT;
ALTER TABLE attempts ADD COLUMN server_timings TEXT;
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    run_id TEXT REFERENCES runs(id) ON DELETE CASCADE,
    task_id TEXT,
    attempt INTEGER,
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    status INTEGER,
    bytes_in INTEGER,
    bytes_out INTEGER,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    duration_ms REAL,
    error_class TEXT
);
CREATE INDEX audit_by_run ON audit(run_id);
CREATE TABLE reviews (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    task_id TEXT NOT NULL,
    verdict TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    reviewer TEXT NOT NULL DEFAULT '',
    at TEXT NOT NULL
);
CREATE INDEX reviews_by_task ON reviews(run_id, task_id, at);
CREATE TABLE comparisons (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE TABLE comparison_runs (
    comparison_id TEXT NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    PRIMARY KEY (comparison_id, run_id)
);
CREATE INDEX comparison_runs_by_run ON comparison_runs(run_id);
"""

_V3 = """
CREATE TABLE experiments (
    name TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    config TEXT NOT NULL DEFAULT '{}'
)
"""

_V4 = """
CREATE TABLE judgings (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    other_run_id TEXT REFERENCES runs(id) ON DELETE CASCADE,
    judge_model TEXT NOT NULL,
    rubric_digest TEXT NOT NULL,
    mode TEXT NOT NULL,
    rubric TEXT NOT NULL DEFAULT '',
    judge_entry TEXT NOT NULL DEFAULT '{}',
    provenance TEXT,
    current TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX judgings_by_run ON judgings(run_id, other_run_id);
CREATE TABLE judgements (
    id TEXT PRIMARY KEY,
    judging_id TEXT NOT NULL REFERENCES judgings(id) ON DELETE CASCADE,
    task_id TEXT NOT NULL,
    ordering TEXT NOT NULL,
    verdict TEXT,
    preferred TEXT,
    rationale TEXT NOT NULL DEFAULT '',
    raw_text TEXT NOT NULL DEFAULT '',
    error_class TEXT,
    error TEXT,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    e2e_ms REAL,
    retries INTEGER NOT NULL DEFAULT 0,
    judged_at TEXT NOT NULL
);
CREATE INDEX judgements_by_judging ON judgements(judging_id, task_id, ordering);
CREATE TABLE pair_labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    other_run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    task_id TEXT NOT NULL,
    label TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    reviewer TEXT NOT NULL DEFAULT '',
    at TEXT NOT NULL
);
CREATE INDEX pair_labels_by_task ON pair_labels(run_id, other_run_id, task_id, at)
"""

_V5 = """
ALTER TABLE judgings ADD COLUMN reply_form TEXT NOT NULL DEFAULT 'text'
"""

_TOOLCALL_TABLES = """
CREATE TABLE IF NOT EXISTS {runs} (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    status TEXT NOT NULL,
    model_name TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    suite_version TEXT NOT NULL,
    suite_digest TEXT NOT NULL,
    header TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS {results} (
    run_id TEXT NOT NULL REFERENCES {runs}(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    scenario_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (run_id, scenario_id)
);
CREATE INDEX IF NOT EXISTS {runs}_by_created ON {runs}(created_at);
"""

_V6 = (
    _TOOLCALL_TABLES.format(runs="toolcall_runs", results="toolcall_results")
    + _TOOLCALL_TABLES.format(runs="toolcall_published_runs", results="toolcall_published_results")
    + """
ALTER TABLE audit ADD COLUMN toolcall_run_id TEXT;
CREATE INDEX audit_by_toolcall_run ON audit(toolcall_run_id)
"""
)


_V7 = """
ALTER TABLE comparisons ADD COLUMN baseline TEXT;
CREATE TABLE decisions (
    id TEXT PRIMARY KEY,
    workload_id TEXT NOT NULL,
    model TEXT NOT NULL,
    previous_model TEXT,
    comparison_id TEXT,
    goldset_digest TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    decided_by TEXT NOT NULL DEFAULT '',
    decided_at TEXT NOT NULL,
    canary_percent REAL,
    pins TEXT NOT NULL DEFAULT '{}',
    figures TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX decisions_by_workload ON decisions(workload_id, decided_at)
"""
"""v7: a comparison may name its baseline model; `decisions` records each promotion (the
workload's baseline is its latest decision). `comparison_id` is kept as text, not a foreign
key, so a decision's history outlives a deleted comparison."""


_V8 = """
CREATE TABLE bundles (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    ref TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    report_sha256 TEXT NOT NULL,
    answers INTEGER NOT NULL,
    size_bytes INTEGER NOT NULL,
    published_at TEXT NOT NULL
);
CREATE INDEX bundles_by_ref ON bundles(kind, ref, published_at)
"""
"""v8: every `publish` (kind `comparison`, `run` or `experiment`; `ref` the comparison or run id,
or the experiment's name). `ref` is text, not a foreign key: the record of what was shared
outlives a deleted run."""


_V9 = """
ALTER TABLE judgements ADD COLUMN grade INTEGER;
ALTER TABLE judgements ADD COLUMN attempt INTEGER
"""
"""v9: a `scale` judging (one judge + one rubric over one run, `other_run_id` the reference run
of a similarity rubric) grades each answer alone on 1–5; its judgements keep the grade and
which attempt was graded (part of the judgement id, so a new answer is a new grade). The
judge's tokens and latency stay on judgements, apart from the candidates' attempts."""


# v10, rescoring (`compare-tui rescore`): each run keeps a digest of every task's input as it was
# sent (so a later rescore can prove the answers still answer the same inputs), and a rescored
# run names its source run, the scorers' digest and what changed.
_V10 = """
ALTER TABLE runs ADD COLUMN task_inputs TEXT;
ALTER TABLE runs ADD COLUMN rescore TEXT
"""


_V11 = """
ALTER TABLE runs ADD COLUMN serving TEXT NOT NULL DEFAULT '[]'
"""
"""v11: what the server said about its serving each time a run started or resumed, as a JSON
list of readings ({captured_at, when, fingerprint, loaded, notes, unread}), oldest first
(`engine.serving`): the report's serving caveats, experiments' confounds and `reproduce` read
it. Runs stored before it have `[]`: nothing was read."""


_V12 = """
ALTER TABLE comparisons ADD COLUMN margin_pp REAL
"""
"""v12: the versus-baseline verdict's non-inferiority margin, in points, recorded when a
comparison is created (the manifest's `[decision] margin_pp`, else 5), before any data: a
report that asks for another margin labels it as chosen after the data. Null on comparisons
made before v12 (no margin was recorded)."""


_V13 = """
CREATE TABLE run_leases (
    run_id TEXT PRIMARY KEY,
    token TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    process_start TEXT,
    taken_at TEXT NOT NULL,
    heartbeat_s REAL NOT NULL
);
CREATE TABLE lease_takeovers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    at TEXT NOT NULL,
    previous TEXT NOT NULL,
    holder TEXT NOT NULL,
    reason TEXT NOT NULL,
    unknown_requests INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX lease_takeovers_by_run ON lease_takeovers(run_id, at);
ALTER TABLE audit ADD COLUMN state TEXT NOT NULL DEFAULT 'done'
"""
"""v13: a run is executed under a lease (`store/leases.py`). `run_id` is text, not a foreign
key: a tool-call run's id is leased the same way. `heartbeat_s` is the holder's clock in Unix
seconds. `audit.state` makes every request a row before it is sent (`engine/audit.py`)."""


_V14 = """
ALTER TABLE attempts ADD COLUMN cached_tokens INTEGER
"""
"""v14: each attempt's prompt tokens the server took from its prompt cache (`cache_n`,
`cached_tokens`), so that a latency figure can be read with the cache share it ran under. Null
on attempts stored before v14 and where the server did not say."""


_BUYER_CHOICES = """
CREATE TABLE IF NOT EXISTS comparison_skips (
    comparison_id TEXT NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    reason TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (comparison_id, model)
);
CREATE TABLE IF NOT EXISTS workload_selections (
    workload_id TEXT PRIMARY KEY,
    models TEXT NOT NULL,
    saved_at TEXT NOT NULL
)
"""
"""The buyer's choices: `comparison_skips`, each model a comparison left out and why (the daily
eval budget); `workload_selections`, the models last chosen
for a workload on the New run screen (JSON list), restored on the next run."""

_V_SEQUENTIAL = """
ALTER TABLE comparisons ADD COLUMN sequential TEXT
"""
"""A comparison run with `--stop-when-settled`: the seed and the task order its sequential
verdicts follow, as JSON (`store.records.SequentialOrder`), recorded before the first request.
Null for a fixed-N comparison."""

_CANARY = """
CREATE TABLE canaries (
    id TEXT PRIMARY KEY,
    workload_id TEXT NOT NULL,
    alias TEXT NOT NULL,
    baseline TEXT NOT NULL,
    candidate TEXT NOT NULL,
    set_path TEXT NOT NULL,
    steps TEXT NOT NULL,
    step INTEGER NOT NULL,
    weight REAL NOT NULL,
    routes_digest TEXT NOT NULL,
    state TEXT NOT NULL,
    margin_pp REAL NOT NULL,
    min_pairs INTEGER NOT NULL,
    auto_advance INTEGER NOT NULL DEFAULT 0,
    max_usd_per_day REAL,
    gateway_config TEXT NOT NULL,
    traffic_log TEXT NOT NULL,
    log_offset INTEGER NOT NULL DEFAULT 0,
    pairs_at_step INTEGER NOT NULL DEFAULT 0,
    started_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX canaries_by_workload ON canaries(workload_id, started_at);
CREATE TABLE canary_pairs (
    canary_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    task_id TEXT,
    candidate_outcome TEXT,
    baseline_outcome TEXT,
    paired INTEGER,
    skipped TEXT,
    replay_audit_id INTEGER,
    replay_usd REAL NOT NULL DEFAULT 0,
    at TEXT NOT NULL,
    PRIMARY KEY (canary_id, call_id)
);
CREATE TABLE canary_changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    canary_id TEXT NOT NULL,
    workload_id TEXT NOT NULL,
    at TEXT NOT NULL,
    change TEXT NOT NULL,
    from_weight REAL,
    to_weight REAL,
    verdict TEXT,
    evidence TEXT NOT NULL,
    decided_by TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX canary_changes_by_workload ON canary_changes(workload_id, at)
"""
"""The quality-gated canary (`compare-tui canary`): one row per canary (`step` indexes `steps`,
a JSON list of B's weights in %, −1 in shadow; `weight` and `routes_digest` are what it last
wrote to the gateway's config, the compare-and-set's expectation; `log_offset` is how far into
the traffic log it has read, committed with each pair so a killed watch resumes exactly), each
logged request of B it paired (`paired` −1/0/+1, else `skipped` says why; `replay_audit_id`
the off-path replay's audit row), and each change of the split or refusal to make one, with
the evidence behind it (JSON)."""

_CANARY_JUDGE = """
ALTER TABLE canaries ADD COLUMN judge TEXT;
ALTER TABLE canaries ADD COLUMN judge_structured INTEGER NOT NULL DEFAULT 0;
ALTER TABLE canaries ADD COLUMN judge_rubric TEXT NOT NULL DEFAULT 'pairwise';
ALTER TABLE canary_pairs ADD COLUMN grader TEXT;
ALTER TABLE canary_pairs ADD COLUMN judge TEXT;
ALTER TABLE canary_pairs ADD COLUMN judge_result TEXT;
ALTER TABLE canary_pairs ADD COLUMN judge_audit_ids TEXT NOT NULL DEFAULT '[]';
ALTER TABLE canary_pairs ADD COLUMN judge_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE canary_pairs ADD COLUMN judge_detail TEXT NOT NULL DEFAULT ''
"""
"""A canary's judge for traffic no golden-set check grades (`canaries.judge`, a catalogue name,
null: none; `judge_structured`: its replies constrained to a JSON verdict; `judge_rubric`:
`pairwise` or `similarity`), and per pair what decided it (`grader`: `check` or `judge`), the judge's model,
its pair result over both orders, the audit rows of its calls (a JSON list of ids), their
cost, and each order's verdict or why it gave none (`judge_detail`)."""


def _script(sql: str) -> Callable[[sqlite3.Connection], None]:
    # `executescript` would COMMIT the caller's transaction; run statement by statement so a
    # migration and its version bump land together or not at all.
    def apply(conn: sqlite3.Connection) -> None:
        for statement in sql.split(";"):
            if statement.strip():
                conn.execute(statement)

    return apply


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _script(_V1),
    _script(_V2),
    _script(_V3),
    _script(_V4),
    _script(_V5),
    _script(_V6),
    _script(_V7),
    _script(_V8),
    _script(_V9),
    _script(_V10),
    _script(_V11),
    _script(_V12),
    _script(_V13),
    _script(_V14),
    _script(_BUYER_CHOICES),
    _script(_V_SEQUENTIAL),
    _script(_CANARY),
    _script(_CANARY_JUDGE),
]
"""`MIGRATIONS[n]` takes a store from schema version n to n + 1 (0 = an empty file)."""

CURRENT_VERSION = len(MIGRATIONS)


@dataclass(frozen=True, slots=True)
class Inspection:
    """What an SQLite file holds: nothing, a compare-tui store (and its version), or else."""

    kind: str
    """"empty", "store" or "foreign"."""
    version: int = 0
    tables: tuple[str, ...] = ()


def inspect(conn: sqlite3.Connection) -> Inspection:
    """Recognise the file behind `conn` without writing to it."""
    names = tuple(
        sorted(
            row[0]
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        )
    )
    if not names:
        return Inspection("empty")
    if "meta" in names:
        try:
            rows = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('app', 'schema_version')"))
        except sqlite3.OperationalError:
            # A `meta` table of someone else's shape: not ours.
            return Inspection("foreign", tables=names)
        if rows.get("app") == APP_MARKER:
            try:
                version = int(rows.get("schema_version", "0"))
            except ValueError:
                version = 0
            return Inspection("store", version=version, tables=names)
    return Inspection("foreign", tables=names)


def migrate(conn: sqlite3.Connection, from_version: int) -> int:
    """Apply every migration after `from_version` inside the caller's transaction."""
    for version in range(from_version, CURRENT_VERSION):
        MIGRATIONS[version](conn)
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('app', ?)", (APP_MARKER,))
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(CURRENT_VERSION),))
    return CURRENT_VERSION
