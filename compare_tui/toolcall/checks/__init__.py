"""Deciding a scenario's outcome (pure): the universal checks, stream assembly rules, expectations, unsupported vs error."""
