"""Rubric grading in isolation: the 1-5 scale, figures, the report, its text/JSON/Markdown, grades as replay-step verdicts."""
