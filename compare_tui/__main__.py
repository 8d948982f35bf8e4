from compare_tui.cli import main

if __name__ == "__main__":  # not when a spawned child (the TUI's engine process) imports it
    raise SystemExit(main())
