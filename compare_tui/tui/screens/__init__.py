"""One screen per module: home, new_run, live, report, task_detail, diff, review, help, and the
small modal screens (run_picker, note_entry, refusal)."""
