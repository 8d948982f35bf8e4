"""The vLLM tests: a real vLLM server (tests/support/vllm_server.py), started for this package only."""
