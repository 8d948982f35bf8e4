"""`compare-tui sets import FILE_OR_DIR --out DIR`: a golden set from a CSV, JSONL, Parquet,
saved Hugging Face dataset, promptfoo or inspect_ai file."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from compare_tui.commands.common import CommandError, add_store_option, open_store, say

if TYPE_CHECKING:
    from compare_tui.importing import ImportedSet

DESCRIPTION = """\
Write a golden set folder (golden.toml, tasks/<id>.json, import.json) from the file your tasks
already live in. Each row becomes one task: its input from --input-column (or a whole
conversation from --messages-column), its expected outcome from --expected-column, checked
by --scorer. Nested fields are read by dotted path (request.prompt). Rows are numbered as you
see them: a CSV's as a spreadsheet does (the header is row 1, the first task row 2), a JSONL
file's by line; a blank row keeps its number and is named, never skipped unsaid.

Formats (told from the name, or --format): csv (header row, quoted fields, UTF-8 with or
without BOM; the delimiter, comma, semicolon, tab or pipe, is told from the header, or give
--delimiter), jsonl (one object per line), parquet and hf (a folder written by
datasets' save_to_disk; read locally with pyarrow, never from a hub; --split for a
DatasetDict), promptfoo (YAML: prompts + tests with vars and assert; equals → exact,
contains/icontains → regex, regex → regex, is-json/contains-json → json with the value
as schema; other asserts are listed per task in import.json as not imported), inspect
(JSONL with input, target, id, metadata; a list of targets matches any of them, whole and
as written, so not with --normalize; in other formats a list is not an expected text).

Ids come from --id-column or the row number (row-0007); a duplicate id (ignoring case) is an
error naming both rows. Every row that cannot become a task is listed (row, column, reason)
and nothing is written unless --skip-bad-rows. Deterministic: the same input and options
give the same folder byte for byte. import.json records the source's sha256, the options,
the counts, skipped rows and redaction counts (--scrub replaces e-mail addresses, phone
numbers, keys, card numbers and IP addresses as `sample` does).

The workload id (default: from the file name) is what baselines and promotions belong to. When
it comes from the file name and the store already holds that workload for another set (another
digest: a different tickets.csv, or a new version of it), nothing is written: give
--workload-id, the same id to make this set the workload's new version, another to keep it apart.
"""

EPILOG = """\
examples (one per format):
  compare-tui sets import tickets.csv --out sets/tickets --input-column question --expected-column label
  compare-tui sets import logs.jsonl --out sets/logs --input-column request.prompt --expected-column reply.text
  compare-tui sets import eval.parquet --out sets/eval --id-column uid --scorer regex
  compare-tui sets import ./saved_dataset --format hf --split test --out sets/hf --limit 200 --seed 7
  compare-tui sets import promptfooconfig.yaml --out sets/promptfoo
  compare-tui sets import samples.jsonl --format inspect --out sets/inspect
  compare-tui sets import export.csv --delimiter ';' --out sets/export

exit codes: 0 written; 2 bad input, a bad row (nothing written), or a workload id the store
holds for another set (nothing written)
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
    parser.add_argument(
        "--workload-id",
        metavar="ID",
        help="the set's workload id (default: from the file name, unless the store holds that workload for another set)",
    )
    parser.add_argument("--name", metavar="NAME", help="the set's name (default: Imported from FILE)")
    parser.add_argument(
        "--version", metavar="V", help="the set's version (default: import-<pin of source and options>)"
    )
    parser.add_argument(
        "--limit", type=int, metavar="N", help="keep N tasks: the first N, or with --seed a deterministic sample"
    )
    parser.add_argument("--seed", metavar="S", help="with --limit: which N rows (sha256 of seed and id)")
    parser.add_argument("--split", metavar="NAME", help="for a saved DatasetDict: the split to import")
    parser.add_argument(
        "--delimiter",
        metavar="CHAR",
        help="a CSV's delimiter, e.g. ';' or tab (default: told from the header: comma, semicolon, tab or pipe)",
    )
    parser.add_argument("--scrub", action="store_true", help="redact personal data and secrets as `sample` does")
    parser.add_argument(
        "--skip-bad-rows", action="store_true", help="import the good rows; bad ones are listed in import.json"
    )
    parser.add_argument("--force", action="store_true", help="replace the set already in --out")
    add_store_option(parser)
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
        delimiter=_delimiter(args.delimiter),
        tags=tuple(args.tag),
    )
    imported = import_set(source, options)
    note = _workload_check(args, imported, source)
    out = write_imported_set(imported, args.out, force=args.force)
    goldset = load_golden_set(out)
    if note:
        say(note, file=sys.stderr)
    if args.json:
        print(json.dumps({**imported.info, "digest": goldset.digest}, indent=2, ensure_ascii=False))
        return 0
    _summary(imported, out, source.name)
    print(f"set {goldset.manifest.workload_id} {goldset.manifest.version}, digest {goldset.digest}")
    return 0


SHOWN_ROWS = 5
"""Bad rows the summary quotes (import.json lists every one)."""


def _delimiter(given: str | None) -> str | None:
    """`--delimiter` as the character: `tab` and a typed `\\t` spell a tab."""
    if given is None:
        return None
    return "\t" if given.lower() in ("tab", "\\t") else given


def _numbers(numbers: list[int], shown: int = 10) -> str:
    text = ", ".join(str(n) for n in numbers[:shown])
    return text + (f" and {len(numbers) - shown} more" if len(numbers) > shown else "")


def _summary(imported: ImportedSet, out: Path, source_name: str) -> None:
    """What was written, and every source row that made no task, by the source's own numbers."""
    from compare_tui.importing import delimiter_name

    info = imported.info
    counts = info["counts"]
    options = info["options"]
    how = options["format"] + (
        f", {delimiter_name(options['delimiter'])}-delimited" if options.get("delimiter") else ""
    )
    print(f"wrote {out}: {counts['tasks']} tasks from {counts['rows']} rows of {source_name} ({how})")
    if counts["blank_rows"]:
        n = counts["blank_rows"]
        print(
            f"left out {n} blank row{'' if n == 1 else 's'}: {'row' if n == 1 else 'rows'} {_numbers(info['blank_rows'])}"
        )
    if counts["bad_rows"]:
        n = counts["bad_rows"]
        print(f"skipped {n} bad row{'' if n == 1 else 's'} (each listed in {out / 'import.json'}):")
        for problem in info["skipped"][:SHOWN_ROWS]:
            column = f", column {problem['column']!r}" if problem["column"] else ""
            print(f"  row {problem['row']}{column}: {problem['reason']}")
        if n > SHOWN_ROWS:
            print(f"  … and {n - SHOWN_ROWS} more")
    if counts["left_out_by_limit"]:
        print(f"left out {counts['left_out_by_limit']} rows by --limit {options['limit']}")
    if info["not_imported"]:
        n = len(info["not_imported"])
        print(
            f"{n} task{'' if n == 1 else 's'} had asserts no scorer here checks: listed in import.json (not_imported)"
        )


def _workload_check(args: argparse.Namespace, imported: ImportedSet, source: Path) -> str | None:
    """Refuse (nothing written) a workload id taken from the file name that the store already
    holds for another set: two different `tickets.csv` would share one workload's baseline and
    promotions. A `--workload-id` the user gave is theirs to reuse; the note returned says what
    it joins."""
    from compare_tui.importing import imported_digest
    from compare_tui.paths import store_path

    if args.store is None and not store_path().exists():
        return None  # no store yet: no workload to collide with
    workload = imported.manifest["workload_id"]
    digest = imported_digest(imported, Path(args.out))
    with open_store(args.store) as store:
        runs = [r for r in store.list_runs(goldset_id=workload) if r.goldset_digest != digest]
        decisions = [d for d in store.baseline_history(workload) if d.goldset_digest not in ("", digest)]
        where = store.path
    if not runs and not decisions:
        return None
    digests = list(dict.fromkeys([r.goldset_digest for r in runs] + [d.goldset_digest for d in decisions]))
    newest = runs[0] if runs else None
    seen = (
        f"{len(runs)} run{'' if len(runs) == 1 else 's'}"
        + (f" of {newest.goldset_name!r} {newest.goldset_version}" if newest else "")
        + (f", {len(decisions)} promotion{'' if len(decisions) == 1 else 's'}" if decisions else "")
        + f" (digest {', '.join(d[:19] + '…' for d in digests)})"
    )
    if args.workload_id is not None:
        return (
            f"workload {workload!r}: this set (digest {digest[:19]}…) joins the store's {seen}, "
            "as the same workload: it shares their baseline and promotions"
        )
    raise CommandError(
        f"workload {workload!r}, taken from the file name {source.name}, is already in the store ({where}) "
        f"for another set: {seen}; this set's digest is {digest[:19]}…. Sharing the id would mix their "
        f"baselines and promotions, so nothing was written: pass --workload-id {workload} to make this set "
        "that workload's new version, or --workload-id ANOTHER-ID to keep it apart"
    )
