"""Evaluator comparison and the triage queue: a candidate judge against the current evaluator and people's labels."""
