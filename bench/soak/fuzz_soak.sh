#!/usr/bin/env bash
# Fuzz soak (issue 12): every fuzz test at COMPARE_TUI_FUZZ_EXAMPLES examples (default 10,000),
# one pytest process per test so each one's figures stand alone; a line per test is appended
# to $OUT (default bench/results/soak_fuzz.log) as it finishes.
#   bench/soak/fuzz_soak.sh [EXAMPLES [TEST ...]]   (no TEST: every fuzz test below)
set -u
cd "$(dirname "$0")/../.."
EXAMPLES="${1:-10000}"
OUT="${OUT:-bench/results/soak_fuzz.log}"
TESTS=(
  "tests/core/engine/test_fuzz_stream.py::test_a_whole_non_streamed_body_is_accumulated_or_refused"
  "tests/core/sampling/test_fuzz_parsers.py::test_one_log_record_is_a_turn_or_a_named_skip"
  "tests/core/sampling/test_fuzz_parsers.py::test_tools_file_reader_returns_tools_or_a_clear_error"
  "tests/core/engine/test_fuzz_stream.py::test_stream_accumulator_takes_any_chunk_or_refuses_it_as_malformed"
  "tests/core/engine/test_fuzz_stream.py::test_sse_framing_does_not_depend_on_how_bytes_arrive"
  "tests/core/sampling/test_fuzz_parsers.py::test_a_whole_log_file_samples_or_fails_clearly"
  "tests/core/goldset/test_goldset_fuzz.py"
)
shift || true
if [ "$#" -gt 0 ]; then TESTS=("$@"); fi
for t in "${TESTS[@]}"; do
  start=$(date +%s)
  result=$(COMPARE_TUI_FUZZ_EXAMPLES="$EXAMPLES" PYTHONPATH=. .venv/bin/pytest -q -p no:cacheprovider \
           --hypothesis-show-statistics "$t" 2>&1)
  rc=$?
  tail=$(echo "$result" | grep -E "passed|failed|error" | tail -1)
  echo "$(date -u +%H:%M:%S) examples=$EXAMPLES rc=$rc $(( $(date +%s) - start ))s $t :: $tail" | tee -a "$OUT"
  echo "$result" | grep -E "passing examples|failing examples|invalid examples|Stopped because" | sed 's/^/    /' >> "$OUT"
done
