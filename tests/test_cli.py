"""The `udflow` command end to end, on the test batch in tests/pipelines/ (real optimizer, no mocks).

The batch is optimized once per test session (module fixture, --jobs 2); the
other tests reuse its JSON, HTML and results cache.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time
from html import escape

import pytest

from tests.cli_runner import in_process, udflow

ROOT = pathlib.Path(__file__).resolve().parent.parent
BATCH = "tests/pipelines"
UDFLOW = pathlib.Path(sys.executable).parent / "udflow"

BROKEN = {
    "tests/pipelines/broken_import.py": ("import", "udflow_no_such_dependency"),
    "tests/pipelines/broken_construction.py::not_callable": ("build", "must be callable"),
    "tests/pipelines/broken_optimize.py::divides_by_zero": ("optimize", "division by zero"),
}


def _udflow_source() -> str:
    """Digest of udflow's own source files (edited by others while this suite runs in development)."""
    import hashlib

    digest = hashlib.sha256()
    for f in sorted((ROOT / "udflow").rglob("*.py")):
        digest.update(f.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """The test batch optimized from scratch: (process, JSON document, paths, seconds)."""
    tmp = tmp_path_factory.mktemp("cli")
    paths = {"json": tmp / "results.json", "html": tmp / "report.html", "cache": tmp / "cache", "tmp": tmp}
    started = time.perf_counter()
    done = udflow("optimize", BATCH, "--jobs", "2", "--json", str(paths["json"]), "--html", str(paths["html"]),
                  "--cache-dir", str(paths["cache"]))
    seconds = time.perf_counter() - started
    assert paths["json"].exists(), done.stdout + done.stderr
    return done, json.loads(paths["json"].read_text()), paths, seconds


# ---------------------------------------------------------------------------
# help
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["optimize", "explain", "verify", "run"])
def test_every_subcommand_has_help(command):
    done = udflow(command, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: udflow {command}")
    assert "--properties" in done.stdout


def test_console_script_is_installed_and_lists_the_commands():
    done = subprocess.run([str(UDFLOW), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for command in ("optimize", "explain", "verify", "run"):
        assert command in done.stdout


def test_a_missing_path_is_a_usage_error():
    done = udflow("optimize", "no/such/folder")
    assert done.returncode == 2
    assert "no file or folder at 'no/such/folder'" in done.stderr


# ---------------------------------------------------------------------------
# optimize
# ---------------------------------------------------------------------------


def test_batch_completes_reports_the_broken_ones_and_exits_non_zero(batch):
    done, document, _, _ = batch
    assert done.returncode == 1
    by_name = {p["name"]: p for p in document["pipelines"]}
    assert len(by_name) >= 23 and document["summary"]["pipelines"] == len(by_name)
    failed = {n: p for n, p in by_name.items() if p["status"] != "ok"}
    assert set(failed) == set(BROKEN)
    for name, (stage, words) in BROKEN.items():
        assert failed[name]["stage"] == stage
        assert words in failed[name]["reason"]
        assert name in done.stdout and words in done.stdout  # in the summary too
    assert f"{len(by_name) - 3} of {len(by_name)} pipelines optimized, 3 failed" in done.stdout


def test_every_other_pipeline_has_its_results_in_the_json(batch):
    _, document, _, _ = batch
    ok = [p for p in document["pipelines"] if p["status"] == "ok"]
    assert len(ok) >= 20
    for p in ok:
        assert p["alternatives"] >= 1
        drawn = [line.strip() for line in p["original_text"].splitlines()]
        assert p["operators"] == sum(not line.startswith("Source(") for line in drawn)
        assert p["best_cost"] <= p["original_cost"]
        assert len(p["certificates"]) == len(p["rewrites"])
        assert p["explain"] and p["dot"].startswith("digraph")
    names = {p["name"].split("::")[-1] for p in ok}
    assert {"tpch_q7", "tpch_q15", "text_mining", "clickstream"} <= names
    # the optimizer did real work on the batch: some chosen plans differ from the plans as written
    assert sum(bool(p["certificates"]) for p in ok) >= 5


def test_summary_table_has_the_promised_columns(batch):
    done, document, _, _ = batch
    header = done.stdout.splitlines()[0].split()
    assert header[:3] == ["pipeline", "operators", "alternatives"]
    for column in ("est. speed-up", "rewrites applied", "time"):
        assert column in done.stdout.splitlines()[0]
    for p in document["pipelines"]:
        if p["status"] == "ok":
            row = next(line for line in done.stdout.splitlines() if line.startswith(p["name"] + " "))
            assert row.split()[1:3] == [str(p["operators"]), str(p["alternatives"])]


def test_progress_lines_when_not_a_terminal(batch):
    done, document, _, _ = batch
    lines = [line for line in done.stderr.splitlines() if re.match(r"\[\s*\d+/\d+\]", line)]
    assert len(lines) == len(document["pipelines"])


def test_second_run_reoptimizes_nothing_and_no_cache_forces(batch):
    _, first, paths, first_seconds = batch
    again = paths["tmp"] / "again.json"
    started = time.perf_counter()
    done = udflow("optimize", BATCH, "--jobs", "2", "--json", str(again), "--cache-dir", str(paths["cache"]))
    seconds = time.perf_counter() - started
    assert done.returncode == 1
    second = json.loads(again.read_text())
    ok = [p for p in second["pipelines"] if p["status"] == "ok"]
    before = {p["name"]: p for p in first["pipelines"] if p["status"] == "ok"}
    assert ok and set(before) == {p["name"] for p in ok}
    # a result is recomputed only when the optimizer's own code changed in between (the rule set hash)
    changed = [p for p in ok if p["rule_set"] != before[p["name"]]["rule_set"]]
    assert all(p["cached"] for p in ok if p not in changed)
    assert all(not p["cached"] for p in changed)
    if not changed:
        assert [p["best_plan"] for p in ok] == [before[p["name"]]["best_plan"] for p in ok]
        assert seconds < first_seconds / 2
    forced = udflow("optimize", f"{BATCH}/gen_maps.py", "--no-cache", "--json", str(paths["tmp"] / "f.json"),
                    "--cache-dir", str(paths["cache"]), "--jobs", "2")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert not any(p["cached"] for p in json.loads((paths["tmp"] / "f.json").read_text())["pipelines"])


def test_changing_a_function_invalidates_its_cache_entry(tmp_path):
    module = tmp_path / "one.py"
    text = (
        "import udflow as uf\n"
        "def big(r):\n    return r['a'] > LIMIT\n"
        "LIMIT = 3\n"
        "flow = uf.source('t', rows=[{'a': i, 'b': i % 3} for i in range(30)]).map(lambda r: {**r, 'c': 1})"
        ".filter(big)\n"
    )
    module.write_text(text)
    args = ["optimize", str(module), "--jobs", "1", "--cache-dir", str(tmp_path / "c"), "--json"]
    runs = []
    before = _udflow_source()
    for limit in ("3", "3", "4"):
        module.write_text(text.replace("LIMIT = 3", f"LIMIT = {limit}"))
        done = udflow(*args, str(tmp_path / "r.json"), cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        runs.append(json.loads((tmp_path / "r.json").read_text())["pipelines"][0]["cached"])
    assert runs[0] is False and runs[2] is False  # new, and changed: optimized
    if _udflow_source() == before:  # (udflow's own code, edited in development, is part of the key)
        assert runs[1] is True


def test_a_worker_that_dies_is_isolated(tmp_path):
    (tmp_path / "crash.py").write_text(
        "import os\nimport udflow as uf\n"
        "def boom(r):\n    os._exit(3)\n"
        "crashes = uf.source('t', rows=[{'a': 1}]).map(boom).filter(lambda r: r['a'] > 0)\n"
        "fine = uf.source('u', rows=[{'b': 1}, {'b': 2}]).filter(lambda r: r['b'] > 1)\n"
    )
    done = udflow("optimize", str(tmp_path / "crash.py"), "--jobs", "2", "--no-cache", "--json",
                  str(tmp_path / "r.json"), cwd=tmp_path)
    assert done.returncode == 1
    result = {p["attr"]: p for p in json.loads((tmp_path / "r.json").read_text())["pipelines"]}
    assert result["fine"]["status"] == "ok"
    assert result["crashes"]["status"] == "failed" and "worker process died" in result["crashes"]["reason"]


# ---------------------------------------------------------------------------
# verify
# ---------------------------------------------------------------------------


def _certificates(document) -> int:
    return sum(len(p["certificates"]) for p in document["pipelines"] if p["status"] == "ok")


def test_verify_accepts_every_certificate_of_the_batch(batch):
    _, document, paths, _ = batch
    done = udflow("verify", str(paths["json"]), "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    ok = sum(p["status"] == "ok" for p in document["pipelines"])
    assert f"{ok} of {ok} pipelines verified: {_certificates(document)} certificates accepted" in done.stdout
    assert "3 pipeline(s) not verifiable" in done.stdout


def test_verify_with_samples_from_the_pipeline_files(batch, spark):
    _, _, paths, _ = batch
    # one file of four pipelines: each runs its plan as written on both engines (2 s a pipeline)
    done = in_process(spark, "verify", f"{BATCH}/gen_reduce.py", "--sample", "60", "--jobs", "2", "--cache-dir", str(paths["cache"]))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "equal on 60 sampled records per source" in done.stdout


def test_verify_rejects_a_certificate_with_a_fact_removed(batch):
    """Remove, from the file, a fact the rewrite rests on (what an operator reads) and verify again."""
    _, document, paths, _ = batch
    document = json.loads(json.dumps(document))  # a copy: the fixture's document is shared
    victim, n, certificate = next(
        (p, n, c) for p in document["pipelines"] if p["status"] == "ok"
        for n, c in enumerate(p["certificates"], 1) if any(f.startswith("reads(") for f in c["facts"]))
    removed = next(f for f in certificate["facts"] if f.startswith("reads("))
    certificate["facts"].remove(removed)
    tampered = paths["tmp"] / "tampered.json"
    tampered.write_text(json.dumps(document))
    done = udflow("verify", str(tampered), "--jobs", "2")
    assert done.returncode == 1
    rejections = [line for line in done.stdout.splitlines() if line.startswith("REJECTED")]
    assert len(rejections) == 1
    assert victim["name"] in rejections[0]
    assert f"rewrite {n} ({certificate['rule']}" in rejections[0]
    assert f"missing fact {removed}" in rejections[0]


def test_verify_sample_catches_a_chosen_plan_that_changes_the_result(batch):
    """A plan nobody proved (section 4.2.2's filter pushed below its Reduce) differs on the sample."""
    _, document, paths, _ = batch
    document = json.loads(json.dumps(document))
    p = next(p for p in document["pipelines"] if p["name"].endswith("::filter_on_member_field"))
    assert not p["certificates"]  # the optimizer refused the move
    flt = p["original_plan"]
    reduce_ = flt["children"][0]
    p["best_plan"] = {**reduce_, "children": [{**flt, "children": reduce_["children"]}]}
    wrong = paths["tmp"] / "wrong-plan.json"
    wrong.write_text(json.dumps(document))
    done = udflow("verify", str(wrong), "--sample", "200", "--jobs", "2", "--no-spark")  # one engine here
    assert done.returncode == 1
    assert re.search(r"REJECTED .*::filter_on_member_field: .*different bag", done.stdout)
    assert done.stdout.count("REJECTED") == 1


# ---------------------------------------------------------------------------
# explain
# ---------------------------------------------------------------------------


def test_explain_prints_the_plans_and_writes_dot(batch, tmp_path):
    _, _, paths, _ = batch
    dot = tmp_path / "plans.dot"
    done = udflow("explain", f"{BATCH}/gen_joins.py::filter_above_join", "--dot", str(dot),
                  "--cache-dir", str(paths["cache"]))
    assert done.returncode == 0, done.stderr
    assert "Plan as written" in done.stdout and "Chosen plan" in done.stdout
    assert dot.read_text().startswith("digraph")
    assert "fact  " not in done.stdout
    # the rewrite gains a fraction of a percent on this small data: a tie at the default resolution
    assert "the plan as written is kept" in done.stdout
    verbose = udflow("explain", f"{BATCH}/gen_joins.py::filter_above_join", "--verbose", "--resolution", "1e-6",
                     "--cache-dir", str(paths["cache"]))
    assert verbose.returncode == 0 and "fact  " in verbose.stdout, verbose.stderr
    bad = udflow("explain", f"{BATCH}/gen_joins.py::filter_above_join", "--resolution", "2")
    assert bad.returncode != 0 and "relative tolerance" in bad.stderr


@pytest.mark.parametrize("target, stage, words", [
    ("broken_optimize.py::divides_by_zero", "optimize", "ZeroDivisionError"),
    ("broken_import.py::flow", "import", "udflow_no_such_dependency"),
])
def test_explain_of_a_broken_pipeline_says_why(target, stage, words):
    done = udflow("explain", f"{BATCH}/{target}", "--no-cache")
    assert done.returncode == 1
    assert f"the pipeline failed ({stage})" in done.stderr and words in done.stderr
    assert "Traceback" not in done.stderr


def test_explain_of_a_failure_served_from_the_cache_says_why(tmp_path):
    """The cache keeps failures of the optimizer; explain reads them without a KeyError."""
    target = f"{BATCH}/broken_optimize.py::divides_by_zero"
    cache = str(tmp_path / "cache")
    first = udflow("optimize", f"{BATCH}/broken_optimize.py", "--jobs", "1", "--cache-dir", cache)
    assert first.returncode == 1
    done = udflow("explain", target, "--cache-dir", cache)
    assert done.returncode == 1, done.stderr
    assert "the pipeline failed (optimize)" in done.stderr and "ZeroDivisionError" in done.stderr
    assert "Traceback" not in done.stderr and "KeyError" not in done.stderr


def test_a_failure_names_the_users_line_not_udflows_frames(batch):
    _, document, _, _ = batch
    (p,) = [p for p in document["pipelines"] if p["name"].endswith("::divides_by_zero")]
    assert "price_per_missing_unit (" in p["reason"] and "broken_optimize.py:8" in p["reason"]
    assert "statistics" not in p["reason"] and "counted" not in p["reason"]
    # no frame of udflow's own code (the checkout's folder may itself be called udflow)
    import udflow

    assert os.path.dirname(udflow.__file__) not in p["reason"]
    assert not re.search(r"udflow/(analysis|engine|rules|spark_backend|batch|[a-z_]+\.py)", p["reason"])


def test_explain_svg_needs_graphviz(tmp_path):
    svg = tmp_path / "plans.svg"
    done = udflow("explain", f"{BATCH}/gen_maps.py::long_chain", "--svg", str(svg), "--no-cache")
    if shutil.which("dot") is None:
        assert done.returncode == 2
        assert "apt-get install graphviz" in done.stderr and not svg.exists()
    else:
        assert done.returncode == 0, done.stderr
        assert "<svg" in svg.read_text()


# ---------------------------------------------------------------------------
# run (the one Spark run of this file)
# ---------------------------------------------------------------------------


def test_run_writes_parquet_equal_to_the_reference_result(batch, tmp_path, spark):
    import pyarrow.parquet as pq

    from tests.pipelines.gen_joins import reduce_above_join
    from udflow.batch.verify import bag

    _, _, paths, _ = batch
    out = tmp_path / "out"
    done = in_process(spark, "run", f"{BATCH}/gen_joins.py::reduce_above_join", "--master", "local[2]",
                      "--output", str(out), "--cache-dir", str(paths["cache"]))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (out / "_SUCCESS").exists()  # Spark's committer finished the job
    written = pq.read_table(str(out)).to_pylist()
    assert bag(written) == bag(reduce_above_join().collect(engine="reference"))


# ---------------------------------------------------------------------------
# the HTML report, in a real headless browser
# ---------------------------------------------------------------------------


def _chromium() -> str:
    """A chromium already on PATH: `make browser` (run by `make test`, see the README) installs
    Debian's package. This test never installs anything; without a browser it fails saying so."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("no chromium on PATH: run `make browser` (part of `make test`) to install it")
    return found


def _load(page: pathlib.Path, profile: pathlib.Path) -> tuple[str, list[str]]:
    """(DOM after load, console messages) of `page` in headless chromium."""
    done = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", f"--user-data-dir={profile}",
         "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


def test_console_errors_are_seen_by_this_harness(tmp_path):
    """The check below could fail: a page with a script error shows up as console messages."""
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>'
                    '<script>console.error("canary"); nosuchfunction();</script></body></html>')
    _, console = _load(page, tmp_path / "profile")
    assert any("canary" in line for line in console)
    assert any("nosuchfunction" in line for line in console)


def test_html_report_loads_without_console_errors_and_shows_every_pipeline(batch, tmp_path):
    _, document, paths, _ = batch
    html = paths["html"].read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # nothing fetched
    dom, console = _load(paths["html"], tmp_path / "profile")
    assert console == []
    for p in document["pipelines"]:
        assert p["name"] in dom
        if p["status"] == "ok":
            assert f"estimated cost {p['original_cost']:.4g} s" in dom  # with its unit
        else:
            assert escape(p["reason"].split(" (")[0], quote=False) in dom
    assert "udflow/engine" not in dom and "udflow/reference.py" not in dom  # no internal frames
    assert "_wrap.<locals>" not in dom and "statistics.py" not in dom
    ok = sum(p["status"] == "ok" for p in document["pipelines"])
    assert dom.count('class="plan"') == 2 * ok  # both plans drawn for every optimized pipeline
    assert dom.count("<details><summary>") >= _certificates(document)


def test_an_unchanged_batch_is_answered_without_imports_but_any_change_is_seen(tmp_path):
    """The batch manifest: a helper module that only makes data, or a new pipeline file, is a change."""
    (tmp_path / "_rows.py").write_text("ROWS = [{'a': i, 'b': i % 4} for i in range(40)]\n")
    (tmp_path / "pipes.py").write_text(
        "import udflow as uf\nfrom _rows import ROWS\n"
        "def wide(r):\n    return {**r, 'c': r['a'] + 1}\n"
        "def small(r):\n    return r['b'] < 2\n"
        "flow = uf.source('t', rows=ROWS).map(wide).filter(small)\n"
        "print('imported pipes')\n"  # visible when the module is imported
    )
    args = ["optimize", ".", "--jobs", "1", "--cache-dir", "c", "--json", "r.json"]

    digests = [_udflow_source()]

    def run(expected: tuple[bool, list[bool]]) -> None:
        """Run and compare (imported?, [cached?]) with `expected`. When udflow's own code changed
        since the last run (it is part of what the record depends on), only "imported" is certain."""
        done = udflow(*args, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        pipelines = json.loads((tmp_path / "r.json").read_text())["pipelines"]
        got = ("imported pipes" in done.stdout, [p["cached"] for p in pipelines])
        digests.append(_udflow_source())
        if len(set(digests[-3:])) == 1:
            assert got == expected
        else:
            assert got[0] is True

    run((True, [False]))
    run((False, [True]))  # nothing imported at all
    (tmp_path / "_rows.py").write_text("ROWS = [{'a': i, 'b': i % 4} for i in range(41)]\n")
    run((True, [False]))  # the data changed, through a helper module
    (tmp_path / "more.py").write_text(
        "import udflow as uf\nother = uf.source('u', rows=[{'x': 1}]).filter(lambda r: r['x'] > 0)\n")
    run((True, [False, True]))  # a new file (more.py, listed first): discovery runs again,
    # and the result of pipes.py comes from the cache


# ---------------------------------------------------------------------------
# usage errors, --mode, --strict, the summary on a narrow terminal
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("args, words", [
    (["explain", f"{BATCH}/gen_joins.py::no_such_pipeline"], "has no pipeline 'no_such_pipeline'"),
    (["run", f"{BATCH}/gen_joins.py::no_such_pipeline"], "has no pipeline 'no_such_pipeline'"),
    (["optimize", "README.md"], "is not a .py file"),
    (["explain", "README.md"], "is not a .py file"),
    (["verify", "README.md"], "is not a .py or .json file"),
    (["run", f"{BATCH}/gen_maps.py::two_filters", "--conf", "no-equals-sign"], "--conf takes KEY=VALUE"),
    (["optimize", BATCH, "--jobs", "many"], "must be a whole number"),
])
def test_usage_errors_exit_2(args, words):
    done = udflow(*args, "--no-cache")
    assert done.returncode == 2, done.stdout + done.stderr
    assert words in done.stderr
    assert "Traceback" not in done.stderr
    assert not done.stdout.strip()  # refused before any work was done or shown


def test_run_refuses_an_existing_output_and_accepts_every_mode_it_suggests(tmp_path):
    from udflow.cli import build_parser

    out = tmp_path / "out"
    out.mkdir()
    done = udflow("run", f"{BATCH}/gen_joins.py::reduce_above_join", "--output", str(out), "--no-cache")
    assert done.returncode == 2, done.stdout + done.stderr
    suggested = re.findall(r"--mode (\w+)", done.stderr)
    assert {"overwrite", "append"} <= set(suggested)
    # the backend's own message suggests mode='overwrite' or mode='append' too
    from udflow.spark_backend import write
    import inspect
    suggested += re.findall(r"mode='(\w+)'", inspect.getsource(write))
    for mode in set(suggested):
        args = build_parser().parse_args(["run", "x.py::y", "--output", "o", "--mode", mode])
        assert args.mode == mode


def test_verify_strict_fails_when_a_pipeline_could_not_be_optimized(tmp_path):
    target = f"{BATCH}/broken_optimize.py"
    lenient = udflow("verify", target, "--jobs", "1", "--cache-dir", str(tmp_path / "c"))
    strict = udflow("verify", target, "--jobs", "1", "--strict", "--cache-dir", str(tmp_path / "c"))
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "not verifiable" in strict.stdout


def test_the_summary_table_on_a_narrow_terminal_never_cuts_a_name(batch):
    """Rendered by rich at 70 columns: every pipeline's name is whole (its folder said once
    in the title), wrapped over lines if need be, never ellipsized."""
    import io

    from rich.console import Console

    from udflow.batch.report import print_summary

    _, document, _, _ = batch
    out = io.StringIO()
    console = Console(file=out, width=70, force_terminal=True, color_system=None)
    print_summary(document["pipelines"], console)
    text = out.getvalue()
    assert "…" not in text
    assert "pipelines under tests/pipelines/" in text
    column = "".join(line.split("│")[1].strip() for line in text.splitlines()
                     if line.startswith("│") and line.count("│") > 2)
    names = [p["name"].removeprefix("tests/pipelines/") for p in document["pipelines"] if p["status"] == "ok"]
    assert column == "".join(names)


PLANTED = '''
import udflow as uf
from udflow.analysis.properties import UdfProperties
from udflow.plan import OperatorType


def _properties(fields, params):
    return UdfProperties(kind="custom", reads=frozenset(), writes=frozenset(), emits=(1, 1),
                         card_reads=frozenset(), copy=True, pure=True, output_fields=frozenset(fields[0]),
                         side_reads=(frozenset(),), origin="annotation", location="KeepAll")


KEEP_ALL = OperatorType("KeepAll", 1, reference=lambda bags, params: [dict(r) for r in bags[0]],
                        output_fields=lambda fields, params: fields[0], properties=_properties,
                        spark=lambda frames, params: frames[0]{lowering})

flow = uf.source("t", rows=[{{"k": i, "v": i * 2}} for i in range(10)]).apply(KEEP_ALL).filter(lambda r: r["v"] < 12)
'''


def test_verify_compares_the_plan_as_written_on_both_engines(tmp_path, spark):
    """A planted disagreement (a Spark lowering that drops the record k == 0, which the
    reference semantics keeps) is rejected; the same pipeline with an honest lowering passes.
    Original and chosen plan agree on the reference interpreter in both: only running the plan
    as written on both engines sees it."""
    (tmp_path / "planted.py").write_text(PLANTED.format(lowering='.where("k > 0")'))
    (tmp_path / "honest.py").write_text(PLANTED.format(lowering=""))
    done = in_process(spark, "verify", "planted.py", "honest.py", "--sample", "50", "--jobs", "1", "--no-cache",
                      cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    (rejected,) = [line for line in done.stdout.splitlines() if line.startswith("REJECTED")]
    assert rejected.startswith("REJECTED planted.py::flow: ")
    assert "another bag on Spark than on the reference interpreter" in rejected
    assert "1 record(s) only on the reference, 0 only on Spark" in rejected
    assert "1 of 2 pipelines verified" in done.stdout
    skipped = udflow("verify", "planted.py", "--sample", "50", "--jobs", "1", "--no-cache", "--no-spark",
                     cwd=tmp_path)
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
