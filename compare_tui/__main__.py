from compare_tui.cli import main

if __name__ == "__main__":  # run, not imported
    raise SystemExit(main())
