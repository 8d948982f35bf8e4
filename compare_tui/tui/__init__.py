"""The terminal UI (Textual). The only package of compare_tui that imports Textual.

`compare_tui.tui.app.create_app` builds the app over injected dependencies (a store, a
catalogue path, a sets folder, a theme); `run_app` is what `compare-tui` with no arguments
calls. Importing this package opens nothing and starts nothing.
"""
