"""One report assembly (`assemble_report`): the report, its stored grades and insights, read for
one view with the store open once; `report_rows` for views of the grid alone; and the report's
one JSON document (`report_json_document`). Nothing runs at import time.
"""

from compare_tui.assembly.report import (
    AssembledReport,
    ReportChoices,
    assemble_report,
    report_json_document,
    report_rows,
    view_insights,
)

__all__ = [
    "AssembledReport",
    "ReportChoices",
    "assemble_report",
    "report_json_document",
    "report_rows",
    "view_insights",
]
