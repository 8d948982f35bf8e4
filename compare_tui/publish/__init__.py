"""Publishing: a read-only, self-contained HTML bundle of a comparison, run or experiment.

`publish_report` / `publish_experiment` write `DIR/index.html` (one file: CSS, script and SVG
plots inline, a Content-Security-Policy of `default-src 'none'`, no request to anything
outside it) and `DIR/report.json` (the report's own JSON), and record the bundle in the
store. The pages only lay out figures computed by `compare_tui.report` and
`compare_tui.experiment`. Core: no Textual, no Rich. Nothing runs at import time.
"""

from compare_tui.publish.assets import CONTENT_SECURITY_POLICY
from compare_tui.publish.bundle import (
    Published,
    PublishError,
    publish_experiment,
    publish_report,
)

__all__ = ["CONTENT_SECURITY_POLICY", "PublishError", "Published", "publish_experiment", "publish_report"]
