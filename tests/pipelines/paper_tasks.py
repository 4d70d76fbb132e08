"""The paper's four tasks (section 7.2) and the custom-operator example, at tiny scales.

Data lives under `data/` of the repository (TPC-H scale 0.01, shared with the
test fixtures; `UDFLOW_TPCH_DIR` overrides it) and is generated on first use.
Each generator is idempotent here: a data set already on disk is reused, so
the parent process and the workers see the same files (and the same cache keys).
"""

import os
import pathlib

import udflow as uf

ROOT = pathlib.Path(__file__).resolve().parents[2]
TPCH_DIR = os.environ.get("UDFLOW_TPCH_DIR", str(ROOT / "data" / "tpch-sf0.01"))
TASK_DIR = ROOT / "data" / "cli-batch"


def _tpch() -> str:
    from examples.tpch_data import generate_tpch

    generate_tpch(TPCH_DIR, 0.01)
    return TPCH_DIR


def _generated(name: str, generate, scale: float) -> str:
    folder = TASK_DIR / name
    if not folder.is_dir() or not any(folder.glob("*.parquet")):
        generate(str(folder), scale)
    return str(folder)


@uf.pipeline
def tpch_q7():
    from examples.tpch_q7 import build_flow

    return build_flow(_tpch())


@uf.pipeline
def tpch_q15():
    from examples.tpch_q15 import build_flow

    return build_flow(_tpch())


@uf.pipeline
def text_mining():
    from examples import text_mining as task

    return task.build_flow(_generated("text_mining", task.generate_data, 0.005))


@uf.pipeline
def clickstream():
    from examples import clickstream as task

    return task.build_flow(_generated("clickstream", task.generate_data, 0.005))
