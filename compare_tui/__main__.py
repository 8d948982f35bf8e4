from compare_tui.cli import main

raise SystemExit(main())
