"""Test support: a fault-injecting OpenAI-compatible server (`fake_openai`, `fake_plans`)."""
