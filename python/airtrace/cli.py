"""The `airtrace` command line.

Start-up stays lean: the common case, `airtrace analyze [--json] [--no-progress]
FILE...`, imports nothing but `sys`, `os` and the compiled core, which prints the
table and the JSON itself. Everything else (help, errors in the arguments,
`--parquet`, `demo`) goes through argparse, imported only then.
"""

from __future__ import annotations

import os
import sys

from airtrace import _core

TYPE_CHECKING = False  # typing itself is not imported: it costs start-up time
if TYPE_CHECKING:
    import argparse
    from typing import Sequence

PROG = "airtrace"


class _Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP while a run goes on (SIGINT raises KeyboardInterrupt itself)."""

    def __init__(self, signum: int, name: str) -> None:
        super().__init__(name)
        self.signum, self.name = signum, name


class _StoppedBySignals:
    """A context in which SIGTERM and SIGHUP raise _Stopped, as SIGINT raises
    KeyboardInterrupt: a run then stops at once and removes its partial bundle. A signal
    that was ignored (nohup) or handled otherwise is left alone, and so is every signal
    outside the main thread."""

    def __enter__(self) -> None:
        import signal

        def stop(signum: int, frame: object) -> None:
            raise _Stopped(signum, signal.Signals(signum).name)

        self.handled: list[signal.Signals] = []
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) is signal.SIG_DFL:
                try:
                    signal.signal(sig, stop)
                except ValueError:  # not the main thread
                    return
                self.handled.append(sig)

    def __exit__(self, *exc: object) -> None:
        import signal

        for sig in self.handled:
            signal.signal(sig, signal.SIG_DFL)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        fast = _fast_analyze_args(args)
        if fast is not None:
            files, as_json, progress = fast
            return _analyze(files, as_json=as_json, progress=progress)
        parser = _parser()
        trailing = None
        if args and args[0] == "emulate" and "--" in args:
            # `airtrace emulate SCENARIO --out BUNDLE -- COMMAND ARGS...`: argparse cannot
            # take a trailing command after an optional positional, so it is cut off here.
            cut = args.index("--")
            args, trailing = args[:cut], args[cut + 1 :]
        ns = parser.parse_args(args)
        if ns.command == "emulate":
            ns.user_command = trailing
        if not getattr(ns, "command", None):
            parser.print_help()
            return 2
        import warnings

        warnings.showwarning = _show_warning
        return int(ns.run(ns))
    except _Stopped as e:
        print(f"{PROG}: interrupted by {e.name}", file=sys.stderr)
        return 128 + e.signum
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of our output went away (e.g. `| head`): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _fast_analyze_args(args: list[str]) -> tuple[list[str], bool, bool] | None:
    """(files, json, progress) if `args` is a plain `analyze` command, else None."""
    if len(args) < 2 or args[0] != "analyze":
        return None
    files, as_json, progress = [], False, sys.stderr.isatty()
    for a in args[1:]:
        if a == "--json":
            as_json = True
        elif a == "--no-progress":
            progress = False
        elif a.startswith("-"):
            return None
        else:
            files.append(a)
    return (files, as_json, progress) if files else None


def _parser() -> argparse.ArgumentParser:
    import argparse

    class Parser(argparse.ArgumentParser):
        """argparse's parser, suggesting the nearest choice for a misspelt one (Python 3.14's
        `suggest_on_error`, for the Pythons before it); the sub-commands' parsers are of this
        class too."""

        def _check_value(self, action: argparse.Action, value: object) -> None:
            if action.choices is not None and isinstance(value, str) and value not in action.choices:
                from airtrace.suggest import did_you_mean

                choices = ", ".join(map(repr, action.choices))
                hint = did_you_mean(value, action.choices)
                raise argparse.ArgumentError(action, f"invalid choice: {value!r}{hint} (choose from {choices})")
            super()._check_value(action, value)

    parser = Parser(prog=PROG, description="Find out why TCP is slow over a wireless link.")
    parser.add_argument("--version", action="version", version=f"{PROG} {_core.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    analyze = sub.add_parser(
        "analyze",
        help="rebuild and measure every TCP connection in capture files",
        description="Rebuild every TCP connection in pcap/pcapng files (gzip too), annotate every "
        "packet and print per-connection metrics.",
        epilog="A file cut short or corrupt is analysed up to the damage, with a warning. Exit status: 0 when "
        "every file gave packets; 1 when some file gave none (the others are still reported); 2 for a usage "
        "error.",
    )
    analyze.add_argument(
        "files", nargs="+", metavar="FILE",
        help="capture files (pcap, pcapng, .gz); with --parquet also directories (the captures under them) and "
        "quoted patterns ('runs/**/*.pcap')",
    )
    analyze.add_argument("--json", action="store_true", help="print the report as JSON (docs/json-schema.md)")
    analyze.add_argument(
        "--parquet",
        metavar="DIR",
        help="write connections.parquet and packets.parquet to DIR, both or neither (DIR holds nothing else)",
    )
    analyze.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    shown = analyze.add_argument_group("what to show (as tcptrace -o and tshark -Y; not with --parquet)")
    shown.add_argument(
        "--conn", type=_conn_ids, metavar="N[,M|N-M]",
        help="only these connections, by id as the table numbers them: 3, 1,4 or 2-5 (the ids stay the capture's)",
    )
    shown.add_argument(
        "--sort", default="id", metavar="KEY", choices=[name for name, _ in _core.sort_keys()],
        help="order of the connections: " + "; ".join(f"{name}: {what}" for name, what in _core.sort_keys()),
    )
    shown.add_argument(
        "--packets", action="store_true", help="print the packets (one line each, as the packets table) instead of the connections"
    )
    shown.add_argument(
        "--filter", metavar="EXPR",
        help="only the packets EXPR keeps (implies --packets): columns of the packets table (docs/analysis.md) "
        "compared with == != < <= > >=, joined by and, or, not and parentheses, a flag column alone "
        "being true where set: 'retransmission and conn == 3', 'retrans_kind == timeout or zero_window'",
    )
    where = analyze.add_argument_group("where --parquet analyses (as airtrace sweep)")
    where.add_argument("--jobs", "-j", type=int, help="worker processes (default: one per core; 1: this process)")
    placed = where.add_mutually_exclusive_group()
    placed.add_argument("--scheduler", metavar="ADDRESS", help="analyse on the Dask cluster whose scheduler is at ADDRESS")
    placed.add_argument("--cluster", choices=["local"], help="start a Dask LocalCluster of --jobs workers and analyse on it")
    analyze.set_defaults(run=_analyze_command)

    diagnose = sub.add_parser(
        "diagnose",
        help="name the causes of slow transfers in captures or bundles, with evidence and fixes",
        description="Diagnose capture files or simulation bundles: each finding names a cause (timeout_backoff, "
        "burst_loss, excessive_queueing, ...; docs/diagnosis.md), the connection, the time span, what it cost, "
        "the evidence frames, and what would fix it.",
        epilog="Exit status: 0 when every input was read; 1 when some could not be.",
    )
    diagnose.add_argument("inputs", nargs="+", metavar="FILE|BUNDLE", help="capture files or bundle directories")
    diagnose.add_argument("--json", action="store_true", help="print the findings as a JSON list")
    diagnose.set_defaults(run=_diagnose)

    simulate = sub.add_parser(
        "simulate",
        usage="%(prog)s SCENARIO [--out BUNDLE] [options]\n       %(prog)s --cleanup [DIR]",
        help="run a scenario in the deterministic simulator and write a bundle",
        description="Simulate a scenario file (TOML; docs/scenarios.md) and write its bundle: a pcap per "
        "vantage point, the link event log, the TCP sender state log, summary.json and meta.json. The same "
        "scenario and seed give the same bytes. An existing BUNDLE is replaced only if it is a bundle airtrace "
        "wrote, with nothing else in it; Ctrl-C, SIGTERM and SIGHUP stop the run and remove the partial bundle.",
        epilog="Exit status: 0 on success; 1 when the scenario does not load or the bundle cannot be written; "
        "130, 143, 129 when SIGINT, SIGTERM, SIGHUP stopped it.",
    )
    simulate.add_argument(
        "scenario", metavar="SCENARIO", nargs="?",
        help="scenario file (.toml), or the name of a shipped one, from anywhere (`airtrace example` lists them)",
    )
    simulate.add_argument(
        "--out", "-o", metavar="BUNDLE", help="bundle directory to write (replaced if it is a bundle airtrace wrote)"
    )
    simulate.add_argument(
        "--cleanup",
        nargs="?",
        const=".",
        metavar="DIR",
        help="remove the partial bundles (and `analyze --parquet` staging directories) killed runs left in DIR "
        "(default: the current directory), then exit",
    )
    simulate.add_argument("--seed", type=_seed, help="use this seed instead of the scenario's")
    simulate.add_argument(
        "--set",
        action="append",
        default=[],
        dest="overrides",
        metavar="KEY=VALUE",
        help="override a value of the scenario, checked as the file is: seed=7, link.forward.loss.p=0.02, "
        "flow[1].tcp.variant=newreno (repeatable; docs/scenarios.md)",
    )
    simulate.add_argument("--json", action="store_true", help="print summary.json instead of the table")
    simulate.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    simulate.set_defaults(run=_simulate)

    sweep = sub.add_parser(
        "sweep",
        help="run a parameter study declared in a plan, on every core or a Dask cluster, into a Parquet dataset",
        description="Run the sweep PLAN (TOML; docs/sweeps.md): a base scenario, the values to vary, the seeds. "
        "Every combination is checked before any run. Rows (parameters, seed, metrics, error, version, wall "
        "time) go to RESULTS/runs/*.parquet in atomic batches; the plan's reports to RESULTS/report.html and "
        "RESULTS/report-N.png, their tables to stdout. Query them with `airtrace query RESULTS \"SQL\"`.",
        epilog="Exit status: 0 when every run was made (a run that failed is a row with its error); 1 when the "
        "plan does not load or RESULTS cannot take the results; 130, 143, 129 when SIGINT, SIGTERM, SIGHUP "
        "stopped it (the rows written so far stay: --resume runs the rest).",
    )
    sweep.add_argument(
        "plan", metavar="PLAN", help="sweep plan (.toml), or the name of a shipped one (`airtrace example` lists them)"
    )
    sweep.add_argument("--out", "-o", metavar="RESULTS", help="results directory (required unless --check)")
    sweep.add_argument("--resume", action="store_true", help="run only the runs RESULTS does not hold yet")
    sweep.add_argument("--jobs", "-j", type=int, help="worker processes (default: one per core; 1 runs in this process)")
    where = sweep.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="run on the Dask cluster whose scheduler is at ADDRESS")
    where.add_argument("--cluster", choices=["local"], help="start a Dask LocalCluster of --jobs workers and run on it")
    sweep.add_argument("--check", action="store_true", help="check the plan and print what it would run; run nothing")
    sweep.add_argument("--no-progress", action="store_true", help="never show the progress line")
    sweep.set_defaults(run=_sweep)

    query = sub.add_parser(
        "query",
        help="SQL (DuckDB) over sweep results or analyze --parquet output",
        description="Run SQL over RESULTS: a sweep's rows are the table `runs`; the files `airtrace analyze "
        "--parquet DIR` writes are `connections` and `packets`, whose column names need no quotes "
        "(a_to_b__retransmitted_packets; docs/analysis.md). A sweep's parameter columns have dots or brackets, "
        'which need double quotes: SELECT "link.delay", avg(goodput_bps) FROM runs GROUP BY 1.',
        epilog="Exit status: 0 on success; 1 when RESULTS holds nothing to query or the SQL fails.",
    )
    query.add_argument("results", metavar="RESULTS", help="a sweep's results directory, or an analyze --parquet directory")
    query.add_argument("sql", metavar="SQL", help="the query")
    out_format = query.add_mutually_exclusive_group()
    out_format.add_argument("--csv", action="store_true", help="print CSV")
    out_format.add_argument("--json", action="store_true", help="print a JSON list of rows")
    query.set_defaults(run=_query)

    report = sub.add_parser(
        "report",
        help="write an interactive HTML report of a bundle or captures",
        description="Write one self-contained HTML file (no network needed to open it): the connection table, "
        "utilization, findings when given, and zoomable plots (multi-layer trace, time/sequence, RTT and RTO, cwnd, "
        "throughput). Several capture files of one run are aligned to the first one's clock.",
        epilog="Exit status: 0 on success; 1 when nothing could be read or the file cannot be written.",
    )
    report.add_argument("sources", nargs="+", metavar="BUNDLE|FILE", help="a bundle directory, or capture files of one run")
    report.add_argument("--out", "-o", metavar="HTML", default="report.html", help="file to write (default report.html)")
    report.add_argument(
        "--findings", metavar="JSON", help="a JSON file with a list of findings to show instead of airtrace diagnose's"
    )
    report.add_argument("--no-findings", action="store_true", help="leave the findings section out")
    report.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    report.set_defaults(run=_report)

    plot = sub.add_parser(
        "plot",
        help="draw a static figure (PNG, SVG or PDF) of a bundle or captures",
        description="Draw one figure; the format follows the output's extension (.png, .svg, .pdf). Kinds: "
        "multilayer (TCP sender, TCP receiver and link on one time axis, as Ludwig et al.'s MultiTracer), tsg "
        "(tcptrace-style time/sequence graph), rtt, cwnd, throughput, utilization, or all (one file per kind, "
        "named OUT-KIND.EXT).",
        epilog="Exit status: 0 on success; 1 when nothing could be read or the file cannot be written.",
    )
    plot.add_argument("sources", nargs="+", metavar="BUNDLE|FILE", help="a bundle directory, or capture files of one run")
    plot.add_argument("--out", "-o", metavar="FILE", required=True, help="output file (.png, .svg, .pdf)")
    plot.add_argument("--kind", "-k", default="multilayer", help="multilayer (default), tsg, rtt, cwnd, throughput, utilization, all")
    plot.add_argument("--conn", type=int, help="connection id (default: the one that moved the most data)")
    plot.add_argument("--time", nargs=2, type=float, metavar=("FROM", "TO"), help="time window in seconds")
    plot.set_defaults(run=_plot)

    emulate = sub.add_parser(
        "emulate",
        usage="%(prog)s SCENARIO --out BUNDLE [options] [-- COMMAND ARGS...]\n       %(prog)s --cleanup",
        help="run a scenario's flows over real Linux TCP through the modelled link (root)",
        description="Creates two network namespaces joined by TUN devices and a real-time forwarder that runs "
        "the scenario's link models; the built-in traffic generator runs the flows over the kernel's TCP. "
        "Writes a bundle like `simulate` (captures taken by the forwarder, link.jsonl, tcpstate.jsonl from "
        "TCP_INFO). Needs root. See docs/emulator.md. Everything after `--` is a command run in host a's "
        "namespace (198.18.0.1) instead of the built-in traffic generator, e.g. `-- iperf3 -c 198.18.1.1 -t 10`; "
        "the run ends when it exits.",
    )
    emulate.add_argument(
        "scenario", metavar="SCENARIO", nargs="?", help="scenario file (.toml), or the name of a shipped one"
    )
    emulate.add_argument("--out", "-o", metavar="BUNDLE", help="bundle directory to write (replaced if it is one)")
    emulate.add_argument(
        "--cleanup", action="store_true", help="end the processes and remove the namespaces left by killed runs, then exit"
    )
    emulate.add_argument("--seed", type=_seed, help="use this seed instead of the scenario's")
    emulate.add_argument("--busy-poll", action="store_true", help="spin between deadlines (one core at 100%%)")
    emulate.add_argument(
        "--max-duration", type=_max_duration, metavar="SECONDS", help="stop after this long (above 0, at most 1e9)"
    )
    emulate.add_argument("--json", action="store_true", help="print summary.json instead of the table")
    emulate.add_argument(
        "--server", metavar="CMD", help="start this command first in host b's namespace (198.18.1.1), e.g. 'iperf3 -s -1'"
    )
    emulate.set_defaults(run=_emulate)

    reproduce = sub.add_parser(
        "reproduce",
        help="rerun a seed study's setups and print its figures beside the published ones",
        description="Runs the bundled scenarios that rebuild a seed study's setup over several seeds and prints "
        "each figure the paper reports beside what airtrace measured (mean and range over the seeds). Without "
        "a study, lists them. See docs/simulator.md.",
    )
    reproduce.add_argument("study", nargs="?", help="a study's name, or `all`")
    reproduce.add_argument("--seeds", type=int, default=3, help="seeds per scenario (default 3)")
    reproduce.add_argument(
        "--jobs", "-j", type=int, help="worker processes for the runs (default: one per core; 1: this process)"
    )
    reproduce.add_argument(
        "--patterns", type=int, default=50, help="movement patterns per mean speed and for Split-TCP, for holland-vaidya (default 50)"
    )
    reproduce.add_argument(
        "--out", "-o", metavar="DIR", help="keep the headline runs' bundles (seed 1) in DIR/STUDY/, with their plots"
    )
    fmt = reproduce.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the figures as JSON")
    fmt.add_argument("--markdown", action="store_true", help="print Markdown tables")
    reproduce.set_defaults(run=_reproduce)

    example = sub.add_parser(
        "example",
        help="list the captures, scenarios and plans shipped with airtrace, or copy one here",
        description="Without NAME, lists the sample captures, scenarios and sweep plans shipped with the package. "
        "With NAMEs, copies each into DIR (default: the current directory) at its place in the package: "
        "captures at the top, scenarios/NAME.toml, plans/NAME.toml, with the files each names (a scenario's "
        "trace, a plan's scenario). Scenarios and plans also run by name from anywhere: `airtrace simulate "
        "kuang_cell`, `airtrace sweep rais_bursts`.",
        epilog="Exit status: 0 on success; 1 when a NAME is unknown or a different file is in the way.",
    )
    example.add_argument("names", nargs="*", metavar="NAME", help="a capture's file name, or a scenario's or plan's name")
    example.add_argument("--to", metavar="DIR", default=".", help="copy into DIR (default: the current directory)")
    example.add_argument("--path", action="store_true", help="print where each NAME is installed; copy nothing")
    example.set_defaults(run=_example)

    demo = sub.add_parser(
        "demo",
        help="analyze the bundled sample capture, then simulate a bursty link",
        description="Analyze the bundled sample capture (a real bulk transfer over a slow, lossy link "
        "between two network namespaces), then simulate Rais & Tripathi's bursty wireless link and analyze "
        "the capture the simulation wrote.",
    )
    demo.set_defaults(run=_run_demo)
    return parser


def _seed(text: str) -> int:
    """--seed: an integer from 0 to 2**64 - 1 (argparse's type)."""
    import argparse

    from airtrace.simulation import check_seed

    try:
        seed = int(text)
        check_seed(seed)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a seed (an integer from 0 to 2**64 - 1)") from None
    return seed


def _max_duration(text: str) -> float:
    """--max-duration: seconds, above 0 and at most 1e9 (argparse's type)."""
    import argparse

    from airtrace.emulation import check_max_duration

    try:
        seconds = float(text)
        check_max_duration(seconds)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a time in seconds above 0 and at most 1e9") from None
    return seconds


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # type: ignore[no-untyped-def]
    """Warnings as one line each, `airtrace: warning: ...` (no source line)."""
    print(f"{PROG}: warning: {message}", file=sys.stderr if file is None else file)


def _conn_ids(text: str) -> list[int]:
    """--conn: connection ids, `3`, `1,4`, `2-5` or a mix (argparse's type)."""
    import argparse

    ids: list[int] = []
    try:
        for part in text.split(","):
            first, _, last = part.strip().partition("-")
            ids += range(int(first), int(last or first) + 1)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r} is not a list of connection ids (e.g. 3, 1,4 or 2-5)"
        ) from None
    if not ids:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} names no connection (e.g. 3, 1,4 or 2-5)")
    return ids


def _analyze_one(
    path: str,
    *,
    progress: bool,
    table: bool,
    name: str | None = None,
    findings: bool = False,
    conns: list[int] | None = None,
    sort: str = "id",
) -> _core.Analysis | None:
    """The analysis of one file (with its findings in the JSON if asked), its connections
    those of `conns` (all when None) in the order of `sort`; or None (after printing
    the error) if nothing could be read or none of `conns` is in it."""
    try:
        analysis = _core.analyze(path, progress=progress, table=table, name=name, findings=findings, conns=conns, sort=sort)
    except ValueError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return None
    if analysis.missing:
        missing = ", ".join(map(str, analysis.missing))
        has = _id_list(range(analysis.connections))
        if len(analysis.missing) == len(set(conns or [])):
            print(f"{PROG}: error: {path}: no connection {missing}; --conn takes {has}", file=sys.stderr)
            return None
        print(f"{PROG}: warning: {path}: no connection {missing} (its connections: {has})", file=sys.stderr)
    for w in analysis.warnings:
        print(f"{PROG}: warning: {w}", file=sys.stderr)
    if analysis.error:
        print(f"{PROG}: warning: {analysis.error} (analysed the {analysis.frames} frames before it)", file=sys.stderr)
    return analysis


def _analyze(
    files: list[str], *, as_json: bool, progress: bool, conns: list[int] | None = None, sort: str = "id"
) -> int:
    """`airtrace analyze`: exit code 1 if some file could not be read at all."""
    reports = []
    failed = False
    for path in files:
        analysis = _analyze_one(path, progress=progress, table=not as_json, findings=as_json, conns=conns, sort=sort)
        if analysis is None:
            failed = True
            continue
        reports.append(analysis.json)
        if analysis.table is not None:
            sys.stdout.write(analysis.table)
    if as_json:
        _print_json_reports(reports)
    return 1 if failed else 0


def _print_json_reports(reports: list[str]) -> None:
    sys.stdout.write(f'{{"airtrace_version": "{_core.__version__}", "files": [{", ".join(reports)}]}}\n')


def _analyze_command(args: argparse.Namespace) -> int:
    if args.parquet:
        if args.conn or args.sort != "id" or args.packets or args.filter:
            print(f"{PROG}: error: --conn, --sort, --packets and --filter choose what is printed; --parquet "
                  "writes every connection and packet (query them: airtrace query DIR SQL)", file=sys.stderr)
            return 2
        return _analyze_to_parquet(args)
    if args.jobs is not None or args.scheduler or args.cluster:
        print(f"{PROG}: error: --jobs, --scheduler and --cluster go with --parquet", file=sys.stderr)
        return 2
    progress = not args.no_progress and sys.stderr.isatty()
    if args.packets or args.filter:
        from airtrace.packet_list import print_packets

        return print_packets(args.files, conns=args.conn, expression=args.filter, as_json=args.json, progress=progress)
    return _analyze(args.files, as_json=args.json, progress=progress, conns=args.conn, sort=args.sort)


def _analyze_to_parquet(args: argparse.Namespace) -> int:
    """`airtrace analyze --parquet DIR`: the files (directories and patterns expanded),
    analysed where --jobs, --scheduler or --cluster say, each printed as it comes back
    in the order given, and the pair of tables published."""
    from airtrace.export import Analysed, NothingToWrite, captures_in, write_parquet
    from airtrace.workers import WorkersError

    try:
        files = captures_in(args.files)
    except ValueError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    reports: list[str] = []
    failed = False

    def show(one: Analysed) -> None:
        nonlocal failed
        if one.error is not None:
            print(f"{PROG}: error: {one.error}", file=sys.stderr)
            failed = True
            return
        for w in one.warnings:
            print(f"{PROG}: warning: {w}", file=sys.stderr)
        if args.json:
            reports.append(one.text)
        else:
            sys.stdout.write(one.text)
            sys.stdout.flush()

    try:
        with _StoppedBySignals():
            written = write_parquet(
                files, args.parquet, as_json=args.json, on_file=show,
                jobs=args.jobs, scheduler=args.scheduler, cluster=args.cluster,
                progress=sys.stderr if not args.no_progress and sys.stderr.isatty() else None,
            )
    except NothingToWrite:
        written = []
    except (OSError, WorkersError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    if args.json:
        _print_json_reports(reports)
    for path in written:
        print(f"{PROG}: wrote {path}", file=sys.stderr)
    return 1 if failed else 0


def _diagnose(args: argparse.Namespace) -> int:
    """`airtrace diagnose`: findings per input, as text or one JSON list."""
    import json

    from airtrace.diagnosis import DiagnosisError, diagnose, diagnosed_capture
    from airtrace.findings_text import findings_text
    from airtrace.trace import connection_lines

    everything, failed = [], False
    for path in args.inputs:
        try:
            findings = diagnose(path)
        except DiagnosisError as e:
            print(f"{PROG}: error: {e}", file=sys.stderr)
            failed = True
            continue
        everything.extend(findings)
        if not args.json:
            sys.stdout.write(findings_text(path, findings, connection_lines(diagnosed_capture(path))))
    if args.json:
        sys.stdout.write(json.dumps([f.to_dict() for f in everything], indent=2) + "\n")
    return 1 if failed else 0


def _simulate(args: argparse.Namespace) -> int:
    """`airtrace simulate`: run the scenario, print the per-flow summary. The native
    `airtrace` runs the plain forms itself (crates/airtrace-cli/src/simulate.rs): keep
    the two in step (tests/test_launcher.py compares them byte for byte)."""
    if args.cleanup is not None:
        return _simulate_cleanup(args)
    if not args.scenario:
        print(f"{PROG}: error: simulate needs SCENARIO (or --cleanup)", file=sys.stderr)
        return 2
    import json

    from airtrace.simulation import ScenarioError, simulate, summary_table

    with _StoppedBySignals():
        try:
            progress = not args.no_progress and sys.stderr.isatty()
            summary = simulate(args.scenario, args.out, seed=args.seed, progress=progress, set=args.overrides)
        except (ScenarioError, OSError) as e:
            print(f"{PROG}: error: {e}", file=sys.stderr)
            return 1
    if args.json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    else:
        sys.stdout.write(summary_table(summary))
    if args.out:
        print(f"{PROG}: wrote {args.out}", file=sys.stderr)
    else:
        print(f"{PROG}: no bundle written (--out DIR keeps the captures, logs and summary)", file=sys.stderr)
    return 0


def _sweep(args: argparse.Namespace) -> int:
    """`airtrace sweep`: run the plan, print its report tables."""
    from airtrace import sweep_report
    from airtrace.dataset import ResultsError
    from airtrace.sweeps import PlanError, load, plan_text, run

    if args.check:
        try:
            plan = load(args.plan, args.out or ".")
        except PlanError as e:
            print(f"{PROG}: error: {e}", file=sys.stderr)
            return 1
        sys.stdout.write(plan_text(plan, args.plan))
        return 0
    if not args.out:
        print(f"{PROG}: error: sweep needs --out RESULTS (or --check)", file=sys.stderr)
        return 2
    with _StoppedBySignals():
        try:
            plan = load(args.plan, args.out)
            progress = not args.no_progress and sys.stderr.isatty()
            frame = run(
                plan, args.out, jobs=args.jobs, scheduler=args.scheduler, cluster=args.cluster,
                resume=args.resume, progress=progress,
            )
        except (PlanError, ResultsError, OSError) as e:
            print(f"{PROG}: error: {e}", file=sys.stderr)
            return 1
    sys.stdout.write(sweep_report.tables_text(frame, plan.meta))
    failed = int(frame["error"].notna().sum())
    print(f"{PROG}: {len(frame)} runs ({failed} failed) in {os.path.join(args.out, 'runs')}", file=sys.stderr)
    if plan.meta["reports"]:
        print(f"{PROG}: wrote {os.path.join(args.out, 'report.html')}", file=sys.stderr)
    return 0


def _query(args: argparse.Namespace) -> int:
    """`airtrace query`: SQL over results, printed as a table, CSV or JSON (without
    pandas, which would take longer to import than most queries take)."""
    from airtrace.dataset import ResultsError, rows, text_table

    try:
        columns, answer = rows(args.results, args.sql)
    except ResultsError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    if args.csv:
        import csv

        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(answer)
    elif args.json:
        import json

        records = [dict(zip(columns, row)) for row in answer]
        sys.stdout.write(json.dumps(records, default=str) + "\n")
    else:
        sys.stdout.write(text_table(columns, answer))
    return 0


def _simulate_cleanup(args: argparse.Namespace) -> int:
    """`airtrace simulate --cleanup [DIR]`: remove the partial bundles of killed runs."""
    from airtrace.simulation import cleanup

    if args.scenario:
        print(f"{PROG}: error: simulate --cleanup takes no SCENARIO", file=sys.stderr)
        return 2
    try:
        removed = cleanup(args.cleanup)
    except OSError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    for path in removed:
        print(f"{PROG}: removed {path}", file=sys.stderr)
    if not removed:
        print(f"{PROG}: nothing to clean up", file=sys.stderr)
    return 0


def _load_views(sources: list[str]):  # type: ignore[no-untyped-def]
    """A views.Run for the command line, or None after printing why not."""
    from airtrace import views
    from airtrace.trace import AnalysisError

    try:
        run = views.load(sources if len(sources) > 1 else sources[0])
        run.connections  # noqa: B018 (reads the reference capture: an error now, not halfway)
        return run
    except (AnalysisError, ValueError, OSError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return None


def _report(args: argparse.Namespace) -> int:
    """`airtrace report`: the self-contained HTML report."""
    from airtrace import bundlefiles
    from airtrace.report import report
    from airtrace.trace import AnalysisError

    findings = None
    if args.findings:
        from airtrace.finding import Finding, FindingError

        try:
            listed = bundlefiles.read_json(args.findings)
            if not isinstance(listed, list):
                raise FindingError(f"a {type(listed).__name__}, not a list")
            findings = []
            for i, f in enumerate(listed):
                try:
                    findings.append(Finding.from_dict(f))
                except FindingError as e:
                    raise FindingError(f"finding {i + 1}: {e}") from None
        except (bundlefiles.BundleError, FindingError) as e:
            why = "a directory" if os.path.isdir(args.findings) else str(e).removeprefix(f"{args.findings}: ")
            print(f"{PROG}: error: --findings {args.findings}: {why}; it takes a JSON file with a list of "
                  "findings, as `airtrace diagnose --json` writes", file=sys.stderr)
            return 1
    run = _load_views(args.sources)
    if run is None:
        return 1
    findings_capture = None
    if findings is None and not args.no_findings:
        from airtrace.diagnosis import DiagnosisError, diagnose, diagnosed_capture

        try:
            findings = diagnose(args.sources[0])
            findings_capture = diagnosed_capture(args.sources[0])
        except DiagnosisError as e:
            print(f"{PROG}: warning: no findings: {e}", file=sys.stderr)
    progress = sys.stderr if not args.no_progress and sys.stderr.isatty() else None
    try:
        with _StoppedBySignals():
            out = report(run, args.out, findings=findings, findings_capture=findings_capture, progress=progress)
    except (AnalysisError, ValueError, OSError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    print(f"{PROG}: wrote {out}", file=sys.stderr)
    return 0


def _plot(args: argparse.Namespace) -> int:
    """`airtrace plot`: one static figure (or all of them)."""
    from airtrace.plot import plot
    from airtrace.trace import AnalysisError

    run = _load_views(args.sources)
    if run is None:
        return 1
    ids = run.connections.index
    if args.conn is not None and args.conn not in ids:
        print(f"{PROG}: error: {' '.join(args.sources)}: no connection {args.conn}; --conn takes "
              f"{_id_list(ids)}", file=sys.stderr)
        return 2
    if args.time and not args.time[0] < args.time[1]:
        print(f"{PROG}: error: --time {args.time[0]:g} {args.time[1]:g}: FROM must be before TO "
              "(seconds from the capture's start, e.g. --time 0 10)", file=sys.stderr)
        return 2
    try:
        with _StoppedBySignals():
            written = plot(run, args.out, kind=args.kind, conn=args.conn, time=tuple(args.time) if args.time else None)
    except (AnalysisError, ValueError, KeyError, OSError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    for path in written:
        print(f"{PROG}: wrote {path}", file=sys.stderr)
    return 0


def _id_list(ids) -> str:  # type: ignore[no-untyped-def]
    """Connection ids as a user types them: `0-7`, `0, 2, 5`, or `none (no TCP connection)`."""
    ids = sorted(int(i) for i in ids)
    if not ids:
        return "none (no TCP connection)"
    if ids == list(range(ids[0], ids[-1] + 1)) and len(ids) > 2:
        return f"{ids[0]}-{ids[-1]}"
    return ", ".join(map(str, ids))


def _emulate(args: argparse.Namespace) -> int:
    """`airtrace emulate`: run the scenario over real TCP, print the per-flow summary."""
    import json

    from airtrace.emulation import EmulationUnsupported, ScenarioError, cleanup, emulate, summary_text

    try:
        if args.cleanup:
            if args.scenario or args.user_command is not None:
                print(f"{PROG}: error: emulate --cleanup takes no SCENARIO and no command", file=sys.stderr)
                return 2
            removed = cleanup()
            for name, ended in removed:
                if ended:
                    procs = ", ".join(f"{pid} ({line})" for pid, line in ended)
                    print(f"{PROG}: ended the processes left in namespace {name}: {procs}", file=sys.stderr)
                print(f"{PROG}: removed namespace {name}", file=sys.stderr)
            if not removed:
                print(f"{PROG}: nothing to clean up", file=sys.stderr)
            return 0
        if not args.scenario or not args.out:
            print(f"{PROG}: error: emulate needs SCENARIO and --out BUNDLE (or --cleanup)", file=sys.stderr)
            return 2
        if args.user_command is not None and not args.user_command:
            print(f"{PROG}: error: emulate: nothing after `--` (give the command to run, or leave out `--`)", file=sys.stderr)
            return 2
        import shlex

        try:
            server = shlex.split(args.server) if args.server else None
        except ValueError as e:
            print(f"{PROG}: error: --server: {e} in {args.server[:100]!r}", file=sys.stderr)
            return 2
        summary = emulate(
            args.scenario,
            args.out,
            seed=args.seed,
            busy_poll=args.busy_poll,
            max_duration_s=args.max_duration,
            command=args.user_command,
            server=server,
        )
    except (EmulationUnsupported, ScenarioError, OSError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    if args.json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    else:
        sys.stdout.write(summary_text(summary))
    print(f"{PROG}: wrote {args.out}", file=sys.stderr)
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    import json

    from airtrace import reproduce

    if args.study is None:
        sys.stdout.write(reproduce.listing())
        return 0
    keys = list(reproduce.STUDIES) if args.study == "all" else [args.study]
    try:
        for key in keys:
            reproduce.check(key, args.seeds)
    except ValueError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    results = []
    for key in keys:
        if not args.json:
            print(f"{PROG}: reproducing {key} over {args.seeds} seed(s) ...", file=sys.stderr)
        try:
            results.append(reproduce.reproduce(key, seeds=args.seeds, out=args.out, patterns=args.patterns, jobs=args.jobs))
        except ValueError as e:
            print(f"{PROG}: error: {e}", file=sys.stderr)
            return 2
        if not args.json:
            print(results[-1].markdown() if args.markdown else results[-1].text())
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=2))
    return 0


def _example(args: argparse.Namespace) -> int:
    """`airtrace example`: the shipped files, listed, located or copied."""
    from pathlib import Path

    from airtrace import data

    if not args.names:
        sys.stdout.write(data.listing())
        return 0
    failed = False
    for name in args.names:
        try:
            if args.path:
                print(data.find(name).path)
                continue
            there = {path for path in (Path(args.to) / r for r in data.needs(data.find(name))) if path.exists()}
            for path in data.copy(name, args.to):
                print(f"{PROG}: {'already there' if path in there else 'wrote'} {path}", file=sys.stderr)
        except data.UnknownExample as e:
            print(f"{PROG}: error: {e}", file=sys.stderr)
            failed = True
        except OSError as e:  # the file and what is wrong, without Python's [Errno N]
            print(f"{PROG}: error: {f'{e.filename}: {e.strerror}' if e.filename and e.strerror else e}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


def _run_demo(args: argparse.Namespace) -> int:
    from importlib import resources

    sample = resources.files("airtrace") / "data" / "sample-sender.pcapng"
    with resources.as_file(sample) as path:
        print(f"airtrace demo: analysing {sample.name}, a real 4 MB transfer between two network namespaces")
        print("over a shaped link (see testdata/pcaps/README.md in the repository for how it was made).\n")
        analysis = _analyze_one(str(path), progress=False, table=True, name=sample.name)
    if analysis is None:
        return 1
    sys.stdout.write(analysis.table or "")
    print(
        "\nRead it as: retransmissions split by what sent them (to: timeout, fr: fast retransmit, sack: SACK "
        "recovery), RTOs and their backoff, the RTT from data/ACK pairs under Karn's rule, and goodput per "
        "direction."
    )
    return _simulate_demo()


def _simulate_demo() -> int:
    """The second half of the demo: simulate Rais & Tripathi's bursty link, analyze the result."""
    import tempfile
    from importlib import resources

    from airtrace.findings_text import findings_text
    from airtrace.simulation import simulate, summary_table
    from airtrace.trace import connection_lines

    scenario = resources.files("airtrace") / "data" / "scenarios" / "rais_burst_fixed.toml"
    # A fixed place (a previous demo's bundle there is replaced), so that the demo's
    # output is the same every time.
    out = os.path.join(tempfile.gettempdir(), "airtrace-demo", "bursts")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    print(
        "\nNow a simulation (scenarios/rais_burst_fixed.toml): a 3.57 MB transfer with a 1995 BSD TCP over a "
        "430 kbit/s link that loses everything for 100 ms every second (Rais & Tripathi 1995). Its bundle goes "
        f"to {out} (the previous demo's is replaced).\n"
    )
    with resources.as_file(scenario) as path:
        summary = simulate(path, out)
    sys.stdout.write(summary_table(summary))
    flow = summary["flows"][0]
    print(
        f"\nThe bursts cover 10 % of the time, yet {flow['timeouts']} retransmission timeouts left the link idle "
        f"for {flow['idle_s']:.0f} of {flow['end_s']:.0f} s. The bundle (pcaps, link log, TCP state) is in {out}; "
        "the analyzer reads its sender capture like any other:\n"
    )
    analysis = _analyze_one(os.path.join(out, "sender.pcap"), progress=False, table=True, name="sender.pcap")
    if analysis is None:
        return 1
    sys.stdout.write(analysis.table or "")
    from airtrace.diagnosis import diagnose

    findings = sorted(diagnose(out), key=lambda f: -f.cost_s)
    print("\nAnd `airtrace diagnose` on the bundle names the causes (the three costliest findings):\n")
    connections = connection_lines(os.path.join(out, "sender.pcap"))
    sys.stdout.write(findings_text(os.path.basename(out), findings[:3], connections))
    print(
        "Next: `airtrace diagnose YOUR.pcap`, `airtrace report BUNDLE -o report.html` for the interactive "
        "multi-layer view, `airtrace analyze YOUR.pcap --json` for every metric, `airtrace.read(path).packets()` "
        "in Python, `airtrace simulate SCENARIO --out DIR` with a scenario file or the name of a shipped one "
        "(`airtrace example` lists them; docs/scenarios.md), "
        "or `airtrace reproduce` to rebuild the seed studies beside their published figures."
    )
    print(f"{PROG}: wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
