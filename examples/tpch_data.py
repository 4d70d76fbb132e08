"""TPC-H data for the examples: generation with `tpchgen-cli` and the tables as udflow sources.

Generation contract (`generate_tpch`):

- *idempotent*: when all eight `<table>.parquet` files are already in the
  target folder, nothing is run;
- *atomic*: the tool writes into a fresh temporary folder beside the target,
  and only a complete data set is moved into place (one `rename` per file of a
  folder that did not exist before, or a single folder rename), so an
  interrupted run never leaves a half-written data set where a later run would
  mistake it for a complete one;
- a missing tool, or a tool that fails, is a `TpchDataError` (a `UdflowError`)
  that says what to install or what the tool printed.

Sources (`tpch_source`) carry the schema's primary keys and the foreign keys
the optimizer needs for the invariant-grouping rewrite (paper, section 4.3.2):

    lineitem (l_orderkey, l_linenumber)  l_orderkey -> orders, l_suppkey -> supplier
    orders   (o_orderkey)                o_custkey  -> customer
    customer (c_custkey)                 c_nationkey -> nation
    supplier (s_suppkey)                 s_nationkey -> nation
    nation   (n_nationkey)

A table used twice in one flow (nation in Q7) is declared twice with different
`prefix=`es, so that its two uses are different attributes of the global record.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from typing import Optional

import udflow
from udflow.errors import UdflowError

TABLES = ("customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier")

# table -> (primary key, {local fields: (target table, target key)})
SCHEMA: dict[str, tuple[tuple[str, ...], dict[tuple[str, ...], tuple[str, tuple[str, ...]]]]] = {
    "lineitem": (
        ("l_orderkey", "l_linenumber"),
        {
            ("l_orderkey",): ("orders", ("o_orderkey",)),
            ("l_suppkey",): ("supplier", ("s_suppkey",)),
        },
    ),
    "orders": (("o_orderkey",), {("o_custkey",): ("customer", ("c_custkey",))}),
    "customer": (("c_custkey",), {("c_nationkey",): ("nation", ("n_nationkey",))}),
    "supplier": (("s_suppkey",), {("s_nationkey",): ("nation", ("n_nationkey",))}),
    "nation": (("n_nationkey",), {}),
    "region": (("r_regionkey",), {}),
    "part": (("p_partkey",), {}),
    "partsupp": (("ps_partkey", "ps_suppkey"), {}),
}


class TpchDataError(UdflowError):
    """TPC-H data could not be generated or found."""


def table_path(data_dir: str, table: str) -> str:
    return os.path.join(data_dir, f"{table}.parquet")


def is_complete(data_dir: str) -> bool:
    """True when every TPC-H table is present in `data_dir`."""
    return all(os.path.isfile(table_path(data_dir, t)) for t in TABLES)


def find_tpchgen() -> str:
    """The `tpchgen-cli` executable: next to this Python first (the venv), then on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "tpchgen-cli")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("tpchgen-cli")
    if found:
        return found
    raise TpchDataError(
        "TPC-H generation: the `tpchgen-cli` executable was found neither next to "
        f"{sys.executable} nor on PATH; install it with `pip install tpchgen-cli` "
        "(it is in udflow's `test` and `bench` extras)"
    )


def generate_tpch(data_dir: str, scale: float) -> str:
    """Make `data_dir` hold TPC-H at `scale` as `<table>.parquet`; returns `data_dir`.

    Does nothing when the data set is already complete. Note that the scale is
    not recorded: a complete folder is trusted to be of the scale its name says.
    """
    data_dir = os.path.abspath(data_dir)
    if is_complete(data_dir):
        return data_dir
    tool = find_tpchgen()
    parent = os.path.dirname(data_dir)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(data_dir)}.tmp-", dir=parent)
    try:
        _run_tool(tool, scale, staging)
        missing = [t for t in TABLES if not os.path.isfile(table_path(staging, t))]
        if missing:
            raise TpchDataError(f"TPC-H generation: tpchgen-cli did not write {', '.join(missing)}")
        os.chmod(staging, 0o755)  # mkdtemp makes it private; the data set is not
        _publish(staging, data_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return data_dir


def _run_tool(tool: str, scale: float, out_dir: str) -> None:
    cmd = [tool, "parquet", "-s", _fmt_scale(scale), f"--output-dir={out_dir}", "--quiet"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as exc:
        raise TpchDataError(f"TPC-H generation: could not start {tool}: {exc}") from None
    if done.returncode != 0:
        raise TpchDataError(
            f"TPC-H generation: `{' '.join(cmd)}` failed with exit code {done.returncode}:\n"
            f"{done.stderr.strip() or done.stdout.strip()}"
        )


def _fmt_scale(scale: float) -> str:
    return f"{float(scale):g}"


def _publish(staging: str, data_dir: str) -> None:
    """Move a complete data set into place.

    When the target does not exist the whole folder is renamed in one step.
    When it exists (a folder a user made, or an older incomplete attempt with
    some tables) each table file is renamed into it; a file rename is atomic,
    so every `<table>.parquet` present is always a whole file; the tables
    that were missing are moved last, so `is_complete` only becomes true once
    every file is the new one.
    """
    try:
        os.rename(staging, data_dir)
        return
    except OSError as exc:
        if not os.path.isdir(data_dir):
            raise TpchDataError(f"TPC-H generation: cannot create {data_dir!r}: {exc}") from None
    present_first = sorted(TABLES, key=lambda t: not os.path.isfile(table_path(data_dir, t)))
    for table in present_first:  # the missing ones last: complete only once all are new
        os.replace(table_path(staging, table), table_path(data_dir, table))


def tpch_source(data_dir: str, table: str, *, prefix: Optional[str] = None) -> udflow.Flow:
    """One TPC-H table as a udflow source, with its primary key and foreign keys."""
    if table not in SCHEMA:
        raise TpchDataError(f"TPC-H: unknown table {table!r}; tables are {', '.join(TABLES)}")
    path = table_path(data_dir, table)
    if not os.path.isfile(path):
        raise TpchDataError(
            f"TPC-H: no {table}.parquet in {data_dir!r}; generate it with generate_tpch(data_dir, scale)"
        )
    key, foreign_keys = SCHEMA[table]
    return udflow.source(table, path=path, key=list(key), foreign_keys=foreign_keys, prefix=prefix)
