"""The `udflow` command: optimize, explain, verify and run pipelines kept in files.

    udflow optimize PATH... [--json FILE] [--html FILE] [--jobs N] [--properties analysis|manual] [--budget S] [--no-cache]
    udflow explain  PATH::NAME [--verbose] [--dot FILE] [--svg FILE] [--analyze [--master URL]]
    udflow verify   PATH... | RESULTS.json [--sample N]
    udflow run      PATH::NAME [--master URL] [--output PATH]

A PATH is a Python file or a folder of them; a pipeline is every module-level
`Flow` and every `@udflow.pipeline` function (see udflow.batch.discovery).
Exit status: 0 when everything asked for succeeded, 1 when a pipeline failed
(optimize, run) or a certificate or sampled comparison was rejected (verify),
2 for a usage error (a path that does not exist, a missing program).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from typing import Optional, Sequence

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
WRITE_MODES = ("errorifexists", "error", "overwrite", "append", "ignore")  # Spark's save modes

GRAPHVIZ_MISSING = (
    "udflow explain --svg needs Graphviz's `dot` program, which is not on PATH.\n"
    "Install it:  apt-get install graphviz   (Debian/Ubuntu)\n"
    "             dnf install graphviz       (Fedora)\n"
    "             brew install graphviz      (macOS)\n"
    "or write DOT text with --dot FILE and render it elsewhere."
)


class UsageError(Exception):
    """A mistake on the command line that argparse cannot see (a missing file, program or pipeline)."""


# ---------------------------------------------------------------------------
# The parser
# ---------------------------------------------------------------------------


def _add_optimizer_options(p: argparse.ArgumentParser, cache: bool = True) -> None:
    p.add_argument("--properties", choices=("analysis", "manual"), default="analysis",
                   help="function properties from static analysis (default) or from @udflow.annotate")
    p.add_argument("--budget", type=_seconds, metavar="SECONDS",
                   help="time for each pipeline's plan search; when it runs out the best plan found "
                        "so far is used and explain says so (default: no limit)")
    if cache:
        p.add_argument("--no-cache", action="store_true",
                       help="optimize again even when the results cache has an answer")
        p.add_argument("--cache-dir", default=".udflow-cache", metavar="DIR",
                       help="where results are cached (default: .udflow-cache in the working directory)")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _add_jobs_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", "-j", type=_positive, default=min(4, os.cpu_count() or 1), metavar="N",
                   help="worker processes (default: min(4, CPUs))")


def build_parser() -> argparse.ArgumentParser:
    import udflow

    parser = argparse.ArgumentParser(
        prog="udflow",
        description="Reorder data pipelines made of black-box Python functions, prove each rewrite, "
                    "and run them on Spark.",
        epilog="Run `udflow COMMAND --help` for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"udflow {udflow.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "optimize", help="optimize every pipeline under the given paths",
        description="Optimize every pipeline (module-level Flow or @udflow.pipeline function) of the "
                    "given files and folders in parallel worker processes, and print a summary. A pipeline "
                    "that fails is reported with its reason and the batch goes on; the exit status is 1 "
                    "when any failed.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="a .py file or a folder of them")
    p.add_argument("--json", metavar="FILE", help="write every result (plans, costs, certificates) as JSON")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    _add_jobs_option(p)
    _add_optimizer_options(p)

    p = sub.add_parser(
        "explain", help="explain the optimization of one pipeline",
        description="Print the plan as written, the chosen plan, the rewrites with the facts behind "
                    "them and the estimated costs of one pipeline.",
    )
    p.add_argument("target", metavar="PATH::NAME",
                   help="a pipeline, e.g. pipelines/q7.py::q7 (PATH alone when it holds one pipeline)")
    p.add_argument("--dot", metavar="FILE", help="also write both plans as Graphviz DOT")
    p.add_argument("--svg", metavar="FILE", help="also render both plans as SVG (needs Graphviz's dot)")
    p.add_argument("--analyze", action="store_true",
                   help="also run both plans on Spark, operator by operator, and print each operator's "
                        "estimated and actual rows and time (EXPLAIN ANALYZE)")
    p.add_argument("--master", default="local[*]", metavar="URL",
                   help="with --analyze, the Spark master URL (default: local[*])")
    p.add_argument("--verbose", action="store_true",
                   help="also print the facts, Z3 queries and source lines behind each rewrite, the "
                        "estimated costs and what each modelled function computes")
    p.add_argument("--resolution", type=_resolution, metavar="R",
                   help="relative cost difference below which plans tie (default 0.04, the estimates' "
                        "error; 1e-6 takes any gain beyond rounding); optimizes afresh, without the cache")
    _add_optimizer_options(p)

    p = sub.add_parser(
        "verify", help="re-check every certificate behind every chosen plan",
        description="Re-check every certificate behind every chosen plan with the independent checker "
                    "(no Datalog, Z3 queries re-run). PATHs are pipeline files and folders (optimized "
                    "first, from the cache when possible) or a JSON file written by `udflow optimize "
                    "--json`. With --sample N, also run the plan as written and the chosen plan on the "
                    "first N records of every source through the reference interpreter and compare the "
                    "bags, and run the plan as written on the same records on Spark and compare it with "
                    "the reference interpreter's bag. Exit status 1 on any rejection or difference "
                    "(with --strict, also when a pipeline could not be optimized). Pipelines that could "
                    "not be optimized are listed as not verifiable.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="a .py file, a folder, or a results .json file")
    p.add_argument("--sample", type=_positive, metavar="N",
                   help="compare original and chosen plan on N records per source")
    p.add_argument("--no-spark", action="store_true",
                   help="with --sample, skip running the plan as written on Spark (local[*]) to compare "
                        "it with the reference interpreter")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 also when a pipeline could not be optimized (not verifiable)")
    _add_jobs_option(p)
    _add_optimizer_options(p)

    p = sub.add_parser(
        "run", help="optimize one pipeline and run it on Spark",
        description="Optimize one pipeline and run the chosen plan on Spark. Without --output, print "
                    "the first rows; with it, write parquet through Spark's committer.",
    )
    p.add_argument("target", metavar="PATH::NAME", help="a pipeline, e.g. pipelines/q7.py::q7")
    p.add_argument("--master", default="local[*]", metavar="URL",
                   help="Spark master URL (default: local[*]), e.g. spark://host:7077")
    p.add_argument("--output", metavar="PATH", help="write the result as parquet here")
    p.add_argument("--mode", choices=WRITE_MODES, default="errorifexists",
                   help="what to do when --output exists: refuse (errorifexists, error; the default), "
                        "overwrite it, append to it, or ignore (write nothing)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting, repeatable (e.g. spark.executor.memory=4g)")
    p.add_argument("--show", type=int, default=20, metavar="N", help="rows to print without --output (default 20)")
    _add_optimizer_options(p)
    return parser


# ---------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------


def _console():
    from rich.console import Console

    return Console()


def _cache(args):
    from udflow.batch.cache import ResultCache

    if getattr(args, "resolution", None) is not None:  # the cache keeps results at the default only
        return None
    return None if args.no_cache else ResultCache(args.cache_dir)


def _resolution(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"a relative tolerance in [0, 1), got {text!r}")
    return value


def _check_paths(paths: Sequence[str], suffixes: tuple[str, ...] = (".py",)) -> None:
    for path in paths:
        if not os.path.exists(path):
            raise UsageError(f"no file or folder at {path!r}")
        if os.path.isfile(path) and not path.endswith(suffixes):
            raise UsageError(f"{path!r} is not a {' or '.join(suffixes)} file; give pipeline files "
                             "(.py) or folders of them")


def cmd_optimize(args) -> int:
    from udflow.batch.progress import reporter_for
    from udflow.batch.report import print_summary, write_html, write_json
    from udflow.batch.runner import Options, optimize_batch

    _check_paths(args.paths)
    console = _console()
    options = Options(properties=args.properties, jobs=args.jobs, cache=_cache(args), budget_s=args.budget)
    outcomes = optimize_batch(args.paths, options, reporter_for(console))
    print_summary(outcomes, console)
    if args.json:
        write_json(outcomes, args.json, args.properties)
        print(f"results written to {args.json}")
    if args.html:
        write_html(outcomes, args.html, args.properties)
        print(f"report written to {args.html}")
    return EXIT_FAILED if any(o["status"] != "ok" for o in outcomes) else EXIT_OK


def _one(args):
    """(ref, flow, outcome) of the pipeline named by args.target, from the cache when possible."""
    from udflow.batch import discovery
    from udflow.batch.fingerprint import pipeline_key, rule_set_hash
    from udflow.batch.runner import optimize_one

    path, _ = discovery.split_target(args.target)
    if os.path.isfile(path) and not path.endswith(".py"):
        raise UsageError(f"{path!r} is not a .py file (expected PATH::NAME, e.g. pipelines/q7.py::q7)")
    try:
        ref = discovery.resolve(args.target)
    except (FileNotFoundError, LookupError) as exc:
        raise UsageError(str(exc)) from None
    module = discovery.load_module(ref.file)
    if not hasattr(module, ref.attr):
        names = discovery.pipeline_names(module)
        raise UsageError(f"{discovery.display_path(ref.file)} has no pipeline {ref.attr!r}; its pipelines: "
                         + (", ".join(names) or "none"))
    flow = discovery.build(module, ref)
    cache = _cache(args)
    key = pipeline_key(ref.name, ref.file, flow.root, args.properties)
    outcome = cache.get(key) if cache else None
    if outcome is None:
        try:
            _, result, seconds = optimize_one(flow, args.properties, args.budget, _progress_line(ref.name),
                                              getattr(args, "resolution", None))
        except Exception as exc:  # reported like a failed pipeline of a batch
            raise discovery.PipelineLoadError("optimize", discovery.describe_error(exc, ref.file)) from exc
        outcome = {"name": ref.name, "file": ref.file, "attr": ref.attr, **result,
                   "seconds": seconds, "cached": False, "key": key, "rule_set": rule_set_hash()}
        if cache and outcome["complete"]:  # a search the budget cut short may do better next time
            cache.put(key, outcome)
    if outcome.get("status") != "ok":  # a failure the cache kept: reported as it was first
        raise discovery.PipelineLoadError(outcome.get("stage", "optimize"), outcome.get("reason", "unknown"))
    return ref, flow, outcome


def _progress_line(name: str):
    """Progress of a long search in this process, one line on stderr about once a second."""

    def report(progress) -> None:
        print(f"{name}: optimizing: {progress}", file=sys.stderr, flush=True)

    return report


def cmd_explain(args) -> int:
    if args.svg and shutil.which("dot") is None:
        print(GRAPHVIZ_MISSING, file=sys.stderr)
        return EXIT_USAGE
    _, flow, outcome = _one(args)
    print(outcome.get("explain_verbose", outcome["explain"]) if args.verbose else outcome["explain"])
    if args.analyze:
        print("\n" + "\n".join(_analyzed(flow, args)))
    if args.dot:
        _write(args.dot, outcome["dot"] + "\n")
        print(f"\nDOT written to {args.dot}")
    if args.svg:
        done = subprocess.run(["dot", "-Tsvg", "-o", args.svg], input=outcome["dot"], text=True,
                              capture_output=True)
        if done.returncode != 0:
            print(f"dot failed: {done.stderr.strip()}", file=sys.stderr)
            return EXIT_FAILED
        print(f"SVG written to {args.svg}")
    return EXIT_OK


def _analyzed(flow, args) -> list[str]:
    """EXPLAIN ANALYZE: the pipeline optimized again in this process (the cache keeps text, not
    the plans' estimates), then both plans run on Spark operator by operator."""
    import udflow

    resolution = getattr(args, "resolution", None)
    tolerance = {} if resolution is None else {"resolution": resolution}
    opt = udflow.optimize(flow, properties=args.properties, budget_s=args.budget, **tolerance)
    return opt.analyze_lines(True, _spark_session(args.master))


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def cmd_verify(args) -> int:
    from udflow.batch.progress import reporter_for
    from udflow.batch.report import read_json
    from udflow.batch.runner import Options, optimize_batch
    from udflow.batch.verify import verify_batch

    _check_paths(args.paths, (".py", ".json"))
    console = _console()
    json_files = [p for p in args.paths if p.endswith(".json")]
    if json_files and len(json_files) != len(args.paths):
        raise UsageError("give either results .json files or pipeline paths, not both")
    if json_files:
        outcomes = []
        for path in json_files:
            try:
                outcomes.extend(read_json(path)["pipelines"])
            except ValueError as exc:
                raise UsageError(str(exc)) from None
    else:
        options = Options(properties=args.properties, jobs=args.jobs, cache=_cache(args), budget_s=args.budget)
        outcomes = optimize_batch(args.paths, options, reporter_for(None))
    verifiable = [o for o in outcomes if o["status"] == "ok"]
    skipped = [o for o in outcomes if o["status"] != "ok"]
    results = verify_batch(verifiable, args.sample, args.jobs, reporter_for(console))
    reference_only: list[str] = []
    if args.sample and not args.no_spark:
        results = _compare_engines(results, args.sample, reference_only)
    accepted = [r for r in results if r["status"] == "ok"]
    rejected = [r for r in results if r["status"] != "ok"]
    certificates = sum(r.get("certificates", 0) for r in accepted)
    print(f"{len(accepted)} of {len(verifiable)} pipelines verified: {certificates} certificates accepted"
          + (f", original and chosen plan equal on {args.sample} sampled records per source" if args.sample else "")
          + (", the plan as written equal on the reference interpreter and Spark"
             if args.sample and not args.no_spark else "")
          + (f" ({len(reference_only)} not comparable)" if reference_only else ""))
    for line in reference_only:
        print(f"not compared on Spark: {line}")
    for r in rejected:
        print(f"REJECTED {r['name']}: {r['reason']}")
    if skipped:
        print(f"{len(skipped)} pipeline(s) not verifiable (no optimized plan):")
        for o in skipped:
            print(f"  {o['name']}  [{o['stage']}] {o['reason']}")
    return EXIT_FAILED if rejected or (args.strict and skipped) else EXIT_OK


def _compare_engines(results: list[dict], sample: int, reference_only: list[str]) -> list[dict]:
    """Each verified pipeline's plan as written, run on its sample by both engines (one local
    Spark session, in this process): a difference rejects the pipeline. A plan Spark cannot
    run at all (an operator type without a Spark lowering) is listed in `reference_only`."""
    from udflow.batch import discovery
    from udflow.batch.outcome import failed
    from udflow.batch.verify import compare_engines, reference_only as why_not_spark

    if not any(r["status"] == "ok" for r in results):
        return results
    spark = None  # started for the first plan that runs on Spark
    out = []
    for r in results:
        if r["status"] == "ok":
            ref = discovery.PipelineRef(r["file"], r["attr"])
            try:
                flow = discovery.build(discovery.load_module(ref.file), ref)
                skip = why_not_spark(flow.root)
                if skip:
                    reference_only.append(f"{r['name']}: {skip}")
                if not skip and spark is None:
                    spark = _spark_session("local[*]")
                difference = None if skip else compare_engines(flow.root, sample, spark)
            except discovery.PipelineLoadError as err:
                difference = f"{err.stage}: {err.reason}"
            if difference:
                r = failed(r["name"], r["file"], r["attr"], "verify", difference, r.get("seconds", 0.0))
        out.append(r)
    return out


def _gain(speedup) -> str:
    """The estimated gain, never rounded into one that is not there (issue 15, item 3)."""
    if not speedup or speedup <= 1 + 1e-6:
        return " (the plan as written: no plan is estimated cheaper)"
    if speedup < 1.01:
        return f" (estimated {100 * (speedup - 1):.2g}% cheaper than as written)"
    return f" (estimated {speedup:.2f}x cheaper than as written)"


def cmd_run(args) -> int:
    import time

    from udflow.batch.outcome import best_flow

    _spark_conf(args.master, args.conf)  # a malformed --conf is a usage error before any work
    if args.output and args.mode in ("errorifexists", "error") and os.path.exists(args.output):
        raise UsageError(f"--output {args.output!r} exists; pass --mode overwrite, --mode append or "
                         "--mode ignore, or choose another path")
    ref, flow, outcome = _one(args)
    best = best_flow(flow.root, outcome)
    print(f"{ref.name}: {outcome['alternatives']} alternatives, chosen plan{_gain(outcome.get('speedup'))}"
          + f":\n{outcome['best_text']}\n")
    spark = _spark_session(args.master, args.conf)
    started = time.perf_counter()
    if args.output:
        best.write(args.output, spark=spark, mode=args.mode)
        print(f"wrote parquet to {args.output} on {args.master} in {time.perf_counter() - started:.2f} s")
    else:
        rows = best.collect(spark=spark)
        for r in rows[: args.show]:
            print(r)
        print(f"{len(rows)} rows on {args.master} in {time.perf_counter() - started:.2f} s")
    return EXIT_OK


def _local_cores(master: str) -> Optional[int]:
    """Cores of a local master (`local`, `local[4]`, `local[*]`); None for a cluster."""
    if master == "local":
        return 1
    if master.startswith("local["):
        inner = master[len("local["):].split(",")[0].rstrip("]")
        return (os.cpu_count() or 1) if inner == "*" else int(inner)
    return None


def _spark_conf(master: str, confs: Sequence[str]) -> dict[str, str]:
    """Spark settings: sensible ones for a local master (one shuffle partition per core: each
    task of a Python function pays for its worker), then the user's `--conf KEY=VALUE`s, which win."""
    settings = {"spark.ui.showConsoleProgress": "false", "spark.sql.session.timeZone": "UTC",
                "spark.python.worker.reuse": "true"}
    cores = _local_cores(master)
    if cores is not None:
        settings.update({"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": str(cores),
                         "spark.default.parallelism": str(cores)})
    for item in confs:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--conf takes KEY=VALUE, got {item!r}")
        settings[key.strip()] = value.strip()
    return settings


def _spark_session(master: str, confs: Sequence[str] = ()):
    """A SparkSession on `master`; only the backend touches pyspark."""
    from udflow.spark_backend.session import new_session

    return new_session(master, _spark_conf(master, confs), app_name="udflow run")


COMMANDS = {"optimize": cmd_optimize, "explain": cmd_explain, "verify": cmd_verify, "run": cmd_run}


def main(argv: Optional[Sequence[str]] = None) -> int:
    from udflow.batch.discovery import PipelineLoadError
    from udflow.errors import UdflowError

    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except UsageError as exc:
        print(f"udflow {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except PipelineLoadError as exc:
        print(f"udflow {args.command}: the pipeline failed ({exc.stage}): {exc.reason}", file=sys.stderr)
        return EXIT_FAILED
    except UdflowError as exc:
        print(f"udflow {args.command}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
