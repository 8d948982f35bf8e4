"""Preparing and running a judging: the plan, the runner, one judge call, the judge's own usage and the self-preference caveat."""
