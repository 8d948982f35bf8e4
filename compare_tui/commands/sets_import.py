"""`compare-tui sets import FILE_OR_DIR --out DIR`: a golden set from a CSV, JSONL, Parquet,
saved Hugging Face dataset, promptfoo or inspect_ai file."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from compare_tui.commands.common import CommandError

DESCRIPTION = """\
Write a golden set folder (golden.toml, tasks/<id>.json, import.json) from the file your tasks
already live in. Each row becomes one task: its input from --input-column (or a whole
conversation from --messages-column), its expected outcome from --expected-column, checked
by --scorer. Nested fields are read by dotted path (request.prompt). Rows are numbered from 1
(a CSV's first line after the header is row 1).

Formats (told from the name, or --format): csv (header row, quoted fields, UTF-8 with or
without BOM), jsonl (one object per line), parquet and hf (a folder written by
datasets' save_to_disk; read locally with pyarrow, never from a hub; --split for a
DatasetDict), promptfoo (YAML: prompts + tests with vars and assert; equals → exact,
contains/icontains → regex, regex → regex, is-json/contains-json → json with the value
as schema; other asserts are listed per task in import.json as not imported), inspect
(JSONL with input, target, id, metadata; a list of targets matches any of them).

Ids come from --id-column or the row number (row-0007); a duplicate id (ignoring case) is an
error naming both rows. Every row that cannot become a task is listed (row, column, reason)
and nothing is written unless --skip-bad-rows. Deterministic: the same input and options
give the same folder byte for byte. import.json records the source's sha256, the options,
the counts, skipped rows and redaction counts (--scrub replaces e-mail addresses, phone
numbers, keys, card numbers and IP addresses as `sample` does).
"""

EPILOG = """\
examples (one per format):
  compare-tui sets import tickets.csv --out sets/tickets --input-column question --expected-column label
  compare-tui sets import logs.jsonl --out sets/logs --input-column request.prompt --expected-column reply.text
  compare-tui sets import eval.parquet --out sets/eval --id-column uid --scorer regex
  compare-tui sets import ./saved_dataset --format hf --split test --out sets/hf --limit 200 --seed 7
  compare-tui sets import promptfooconfig.yaml --out sets/promptfoo
  compare-tui sets import samples.jsonl --format inspect --out sets/inspect
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from compare_tui.importing import FORMATS, SCORERS

    parser = sub.add_parser(
        "import",
        help="write a golden set from CSV, JSONL, Parquet, a saved HF dataset, promptfoo or inspect files",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("source", metavar="FILE_OR_DIR", help="the file (or saved dataset folder) to import")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the golden set (empty, or see --force)")
    parser.add_argument("--format", choices=FORMATS, help="the source's format (default: told from its name)")
    parser.add_argument(
        "--id-column", metavar="C", help="column holding task ids (default: row numbers, row-0001…; inspect: id)"
    )
    parser.add_argument(
        "--input-column", metavar="C", help="column holding the prompt (default: prompt; inspect: input)"
    )
    parser.add_argument(
        "--messages-column", metavar="C", help="column holding a list of chat messages, instead of a prompt"
    )
    parser.add_argument("--system", metavar="TEXT", help="one system prompt for every task")
    parser.add_argument("--system-column", metavar="C", help="column holding each task's system prompt")
    parser.add_argument(
        "--expected-column",
        metavar="C",
        help="column holding the expected outcome (default: expected; inspect: target)",
    )
    parser.add_argument(
        "--scorer",
        choices=SCORERS,
        default="exact",
        help="how answers are checked (default exact); regex: the expected column is the pattern; json: an object "
        "whose fields must match; json_schema: a schema the answer must satisfy; tool_call: {name, arguments}",
    )
    parser.add_argument(
        "--normalize",
        metavar="LIST",
        help="exact scorer's normalisations, comma-separated: case,whitespace,punctuation",
    )
    parser.add_argument(
        "--command",
        dest="checker",
        metavar="ARGV",
        help="the command scorer's program, e.g. 'python3 check.py' (with --scorer command)",
    )
    parser.add_argument("--tag", action="append", default=[], metavar="TAG", help="a tag for every task (repeatable)")
    parser.add_argument("--workload-id", metavar="ID", help="the set's workload id (default: from the file name)")
    parser.add_argument("--name", metavar="NAME", help="the set's name (default: Imported from FILE)")
    parser.add_argument(
        "--version", metavar="V", help="the set's version (default: import-<pin of source and options>)"
    )
    parser.add_argument(
        "--limit", type=int, metavar="N", help="keep N tasks: the first N, or with --seed a deterministic sample"
    )
    parser.add_argument("--seed", metavar="S", help="with --limit: which N rows (sha256 of seed and id)")
    parser.add_argument("--split", metavar="NAME", help="for a saved DatasetDict: the split to import")
    parser.add_argument("--scrub", action="store_true", help="redact personal data and secrets as `sample` does")
    parser.add_argument(
        "--skip-bad-rows", action="store_true", help="import the good rows; bad ones are listed in import.json"
    )
    parser.add_argument("--force", action="store_true", help="replace the set already in --out")
    parser.add_argument(
        "--json", action="store_true", help="print import.json (plus the set's digest) instead of a summary"
    )
    parser.set_defaults(handler=_import)


def _import(args: argparse.Namespace) -> int:
    from compare_tui.goldset import load_golden_set
    from compare_tui.importing import ImportOptions, guess_format, import_set, write_imported_set

    source = Path(args.source)
    if not source.exists():
        raise CommandError(f"{source}: no such file or folder")
    normalize = tuple(n.strip() for n in args.normalize.split(",") if n.strip()) if args.normalize else ()
    bad = [n for n in normalize if n not in ("case", "whitespace", "punctuation")]
    if bad:
        raise CommandError(
            f"--normalize {','.join(bad)}: not a normalisation; choose from case, whitespace, punctuation"
        )
    try:
        checker = tuple(shlex.split(args.checker)) if args.checker else ()
    except ValueError as exc:
        raise CommandError(f"--command {args.checker!r}: cannot be split into arguments ({exc})") from None
    options = ImportOptions(
        format=args.format or guess_format(source),
        id_column=args.id_column,
        input_column=args.input_column,
        messages_column=args.messages_column,
        system=args.system,
        system_column=args.system_column,
        expected_column=args.expected_column,
        scorer=args.scorer,
        normalize=normalize,
        command=checker,
        workload_id=args.workload_id,
        name=args.name,
        version=args.version,
        limit=args.limit,
        seed=args.seed,
        scrub=args.scrub,
        skip_bad_rows=args.skip_bad_rows,
        split=args.split,
        tags=tuple(args.tag),
    )
    imported = import_set(source, options)
    out = write_imported_set(imported, args.out, force=args.force)
    goldset = load_golden_set(out)
    if args.json:
        print(json.dumps({**imported.info, "digest": goldset.digest}, indent=2, ensure_ascii=False))
        return 0
    counts = imported.info["counts"]
    print(f"wrote {out}: {counts['tasks']} tasks from {counts['rows']} rows of {source.name} ({options.format})")
    if counts["bad_rows"]:
        print(f"skipped {counts['bad_rows']} bad rows (listed in {out / 'import.json'})")
    if counts["left_out_by_limit"]:
        print(f"left out {counts['left_out_by_limit']} rows by --limit {options.limit}")
    if imported.info["not_imported"]:
        n = len(imported.info["not_imported"])
        print(
            f"{n} task{'' if n == 1 else 's'} had asserts no scorer here checks: listed in import.json (not_imported)"
        )
    print(f"set {goldset.manifest.workload_id} {goldset.manifest.version}, digest {goldset.digest}")
    return 0
