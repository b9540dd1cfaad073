"""The `airtrace` command line.

Start-up stays lean: this module imports only the standard library and the compiled
core; pandas and pyarrow are imported only by `--parquet`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from importlib import resources
from typing import Any, Sequence

from airtrace import _core
from airtrace.table import connection_table

PROG = "airtrace"


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of our output went away (e.g. `| head`): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Find out why TCP is slow over a wireless link.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {_core.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    analyze = sub.add_parser(
        "analyze",
        help="rebuild and measure every TCP connection in capture files",
        description="Rebuild every TCP connection in pcap/pcapng files (gzip too), annotate every "
        "packet and print per-connection metrics.",
    )
    analyze.add_argument("files", nargs="+", metavar="FILE", help="capture files (pcap, pcapng, .gz)")
    analyze.add_argument("--json", action="store_true", help="print the report as JSON (docs/json-schema.md)")
    analyze.add_argument("--parquet", metavar="DIR", help="write connections.parquet and packets.parquet to DIR")
    analyze.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    analyze.set_defaults(run=_run_analyze)

    demo = sub.add_parser("demo", help="analyze the bundled sample capture", description="Analyze the bundled sample "
                          "capture: a real bulk transfer over a slow, lossy link between two network namespaces.")
    demo.set_defaults(run=_run_demo)
    return parser


def _analyze_one(path: str, progress: bool) -> dict[str, Any] | None:
    """The report of one file, or None (after printing the error) if nothing could be read."""
    try:
        text, _ = _core.analyze(path, packets=False, progress=progress)
    except ValueError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return None
    report: dict[str, Any] = json.loads(text)
    for w in report["warnings"]:
        print(f"{PROG}: warning: {w}", file=sys.stderr)
    if report["error"]:
        print(f"{PROG}: warning: {report['error']} (analysed the {report['frames']} frames before it)", file=sys.stderr)
    return report


def _run_analyze(args: argparse.Namespace) -> int:
    progress = not args.no_progress and sys.stderr.isatty()
    reports = []
    failed = False
    for path in args.files:
        report = _analyze_one(path, progress)
        if report is None:
            failed = True
            continue
        reports.append(report)
        if not args.json:
            print(connection_table(report))
    if args.json:
        json.dump({"airtrace_version": _core.__version__, "files": reports}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    if args.parquet and reports:
        from airtrace.export import write_parquet

        written = write_parquet([r["path"] for r in reports], args.parquet, progress=progress)
        for p in written:
            print(f"{PROG}: wrote {p}", file=sys.stderr)
    return 1 if failed else 0


def _run_demo(args: argparse.Namespace) -> int:
    sample = resources.files("airtrace") / "data" / "sample-sender.pcapng"
    with resources.as_file(sample) as path:
        print(f"airtrace demo: analysing {sample.name}, a real 4 MB transfer between two network namespaces")
        print("over a shaped link (see testdata/pcaps/README.md in the repository for how it was made).\n")
        report = _analyze_one(str(path), progress=False)
    if report is None:
        return 1
    print(connection_table(report))
    print(
        "\nRead it as: retransmissions split by what sent them (timeouts, fast retransmit, SACK recovery), "
        "the RTT from data/ACK pairs under Karn's rule, and goodput per direction.\n"
        "Next: `airtrace analyze YOUR.pcap --json` for every metric, or `airtrace.read(path).packets()` in Python."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
