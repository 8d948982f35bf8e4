"""Scenarios: the model of one, the official versioned suite (data in `suite/`), and scenarios for a user's own tools."""
