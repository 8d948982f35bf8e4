"""The JSON-Schema subset: JSON values as JSON Schema sees them, the checker, and the survey of keywords not checked."""
