"""Pairwise judging: figures from both orderings, the report built from stored rows, its text and JSON."""
