"""Golden sets from the files teams already keep their tasks in (docs/golden-sets.md, "Importing a set").

This module is the public API. `import_set` reads CSV, JSONL (nested fields by dotted path),
Parquet, a Hugging Face dataset folder written by `save_to_disk`, a promptfoo test file or
inspect_ai-style JSONL into an `ImportedSet`; `write_imported_set` writes it as a golden-set
folder plus `import.json`, which pins the source's sha256 and the options. Nothing is read at
import time, and nothing here imports a UI library.
"""

from .errors import ImportingError
from .importer import ImportedSet, import_set
from .options import SCORERS, ImportOptions
from .promptfoo import MAPPED as PROMPTFOO_ASSERTS
from .readers import FORMATS, delimiter_name, guess_format
from .rows import RowProblem
from .writer import imported_digest, write_imported_set

__all__ = [
    "FORMATS",
    "PROMPTFOO_ASSERTS",
    "SCORERS",
    "ImportOptions",
    "ImportedSet",
    "ImportingError",
    "RowProblem",
    "delimiter_name",
    "guess_format",
    "imported_digest",
    "import_set",
    "write_imported_set",
]
