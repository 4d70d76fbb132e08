"""udflow on a real Spark standalone cluster: a master and two workers (1 core each) started
from the installed pyspark, whose Python has pyarrow but not udflow (tests/standalone.py).

The flows run in a driver process of their own (tests/cluster_driver.py): PySpark allows
one SparkContext per process, and this one holds the suite's local session. The cluster
is stopped before any assertion, so a failing test leaves no process behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.standalone import leftover_processes, standalone_cluster

DRIVER_TIMEOUT_S = 480


@pytest.fixture(scope="module")
def cluster_run(tmp_path_factory, tpch_dir):
    folder = str(tmp_path_factory.mktemp("cluster"))
    out = os.path.join(folder, "result.json")
    with standalone_cluster(folder, workers=2, cores=1, memory="1g") as cluster:
        driver = subprocess.run(
            [sys.executable, "-m", "tests.cluster_driver", "--master", cluster.master_url,
             "--python", cluster.python, "--tpch", tpch_dir, "--scratch", folder, "--out", out],
            cwd=str(ROOT), capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S,
        )
    results = json.load(open(out)) if os.path.exists(out) else {}
    results["_driver"] = {"returncode": driver.returncode, "stderr": driver.stderr[-4000:]}
    results["_leftovers"] = leftover_processes(cluster)
    results["_python"] = cluster.python
    return results


def scenario(results: dict, name: str) -> dict:
    failures = {k: v for k, v in results.items() if k.endswith("_failed")}
    assert name in results, f"scenario {name!r} did not run: {failures or results['_driver']}"
    return results[name]


def test_the_driver_ran_on_the_cluster(cluster_run):
    assert cluster_run["_driver"]["returncode"] == 0, cluster_run["_driver"]["stderr"]
    assert cluster_run["master"].startswith("spark://127.0.0.1:")
    assert not [k for k in cluster_run if k.endswith("_failed")], cluster_run


def test_executors_run_a_python_without_udflow(cluster_run):
    found = scenario(cluster_run, "executors")
    assert found["pythons"] == [cluster_run["_python"]]
    # udflow comes from the zip udflow shipped (SparkFiles), not from the interpreter
    assert found["udflow_from"] and all(".zip" in origin and "udflow-" in origin for origin in found["udflow_from"])


@pytest.mark.parametrize("name", ["q7_optimized", "q15_optimized"])  # as written: tests/test_tpch.py, locally
def test_tpch_queries_equal_the_reference(cluster_run, name):
    result = scenario(cluster_run, name)
    assert result["reference_rows"] > 0
    assert result["equal"], result


def test_reordered_plans_run_on_the_cluster(cluster_run):
    assert scenario(cluster_run, "q7_optimized")["plan_differs"]


@pytest.mark.parametrize("name", ["dataframe_source", "module_not_installed", "closure"])
def test_flows_equal_the_reference(cluster_run, name):
    result = scenario(cluster_run, name)
    assert result["reference_rows"] > 0
    assert result["equal"], result


def test_a_raising_function_names_itself_and_the_record(cluster_run):
    result = scenario(cluster_run, "raising")
    assert result["error_type"] == "UdfRuntimeError", result["message"]
    message = result["message"]
    assert "Map(parse_amount)" in message and "parse_amount" in message
    assert "ValueError" in message and "'three'" in message
    assert "Traceback" not in message and "py4j" not in message.lower()


def test_the_cluster_leaves_no_process_behind(cluster_run):
    assert cluster_run["_leftovers"] == []


@pytest.mark.parametrize("action", ["", "_to_spark"])
def test_an_executor_python_without_pyarrow_is_named(cluster_run, action):
    result = scenario(cluster_run, "bad_pythons")["no_pyarrow" + action]
    assert result["error_type"] == "UdflowError", result
    assert "has no pyarrow" in result["message"] and "python-without-pyarrow" in result["message"]
    assert "Traceback" not in result["message"] and "Py4J" not in result["message"]


@pytest.mark.parametrize("action", ["", "_to_spark"])
def test_a_missing_executor_python_is_named(cluster_run, action):
    result = scenario(cluster_run, "bad_pythons")["missing" + action]
    assert result["error_type"] == "UdflowError", result
    assert "/nonexistent/python3" in result["message"] and "spark.pyspark.python" in result["message"]
