"""compare-tui: compare candidate LLMs on your own golden set, with evidence."""

__version__ = "0.1.0"
