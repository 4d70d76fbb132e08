"""What the executors need to run a flow: udflow's code, the user's functions, a usable Python.

    prepare(spark, node)

1. udflow's own code goes to the executors as a zip added with
   `SparkContext.addPyFile`, once per SparkContext (the zip's name carries a
   hash of its contents); on Spark Connect, as a session artifact
   (`addArtifacts(pyfile=True)`) once per session (`connect.prepare`).
   Executors import only `udflow.spark_backend.udf` and what it needs:
   pyarrow and pyspark, no optimizer dependency.
2. The executors' Python is checked once per SparkContext: it must start (the
   interpreter exists and is the driver's Python version, as PySpark requires)
   and have pyarrow of at least the version PySpark needs. A failure is a
   `UdflowError` naming the interpreter and what is missing, not a Java stack
   trace. udflow's own actions (`collect`, `write`) check with a one-task probe
   per executor slot. `to_spark()` runs no Spark job (a DataFrame is lazy): on
   a local master it checks the interpreter on this machine, where the
   executors run it, without Spark; on a cluster it leaves the check to the
   first udflow action, and a DataFrame's own action meets a missing pyarrow
   in PySpark's words.
3. The user's functions are pickled by cloudpickle, which pickles a function of
   an importable module *by reference* (`module.name`, imported again on the
   executor). Every module of the user's own code that a flow's functions reach
   (the module of each function, and the modules of the functions, classes and
   modules their code refers to) is registered to be pickled *by value*
   instead, so it needs to exist nowhere but in the driver: a script's folder, a
   pipeline folder without `__init__.py`, a module not installed anywhere.
   Installed code (the standard library, site-packages) is still pickled by
   reference: install it on the executors as on the driver.

Which interpreter executors run: `spark.pyspark.python` when set, else
`PYSPARK_PYTHON`, as Spark documents (see `session.get_session`).
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import io
import os
import site
import subprocess
import sys
import sysconfig
import types
import zipfile
from functools import lru_cache
from typing import Any, Callable, Iterator

from pyspark import cloudpickle
from pyspark.sql import SparkSession

import udflow
from udflow.errors import UdflowError
from udflow.plan import Custom, Node
from udflow.spark_backend import connect

MIN_PYARROW = (18, 0)  # pyspark.sql.pandas.utils.require_minimum_pyarrow_version
_OWN_PACKAGES = ("udflow", "pyspark", "py4j")


# Set on a SparkContext whose executors' Python passed the check: it is made once per context.
_PROBED = "_udflow_executors_probed"


def prepare(spark: SparkSession, node: Node, run_jobs: bool = True) -> None:
    """Make `spark`'s executors able to run `node`'s functions (see the module docstring);
    `run_jobs=False` checks the executors' Python without a Spark job where it can."""
    for module in user_modules(functions_of(node)):
        cloudpickle.register_pickle_by_value(module)
    name, data = udflow_zip()
    if connect.is_connect(spark):  # no SparkContext: a session artifact, a probe by a query
        connect.prepare(spark, name, data, run_jobs, _judge, _startup_failure)
        return
    sc = spark.sparkContext
    if name not in (sc._python_includes or []):
        path = os.path.join(sc._temp_dir, name)  # removed by Spark when the context stops
        with open(path, "wb") as fh:
            fh.write(data)
        sc.addPyFile(path)
    if getattr(sc, _PROBED, False):
        return
    if run_jobs:
        check_executors(spark)
    elif sc.master.startswith("local"):
        check_local_python(sc.pythonExec)  # the executors run this machine's interpreter: as good as the probe
    else:
        return  # a cluster without a job: left to the first udflow action
    setattr(sc, _PROBED, True)


# ---------------------------------------------------------------------------
# udflow's code
# ---------------------------------------------------------------------------


@lru_cache(maxsize=1)
def udflow_zip() -> tuple[str, bytes]:
    """(file name, bytes) of a zip of udflow's Python sources, named by their hash."""
    root = os.path.dirname(os.path.abspath(udflow.__file__))
    buffer = io.BytesIO()
    digest = hashlib.sha1()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for folder, dirs, files in sorted(os.walk(root)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for f in sorted(files):
                if f.endswith(".py"):
                    full = os.path.join(folder, f)
                    arcname = os.path.join("udflow", os.path.relpath(full, root))
                    with open(full, "rb") as fh:
                        content = fh.read()
                    digest.update(arcname.encode() + content)
                    info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
                    zf.writestr(info, content)
    return f"udflow-{digest.hexdigest()[:12]}.zip", buffer.getvalue()


# ---------------------------------------------------------------------------
# The executors' Python
# ---------------------------------------------------------------------------


def check_executors(spark: SparkSession) -> None:
    sc = spark.sparkContext
    python = sc.pythonExec
    slots = max(1, sc.defaultParallelism)

    def probe(_):  # nested, so cloudpickle sends it by value: it needs nothing of udflow
        import sys as worker_sys

        try:
            import pyarrow

            arrow = pyarrow.__version__
        except ImportError:
            arrow = None
        yield (tuple(worker_sys.version_info[:2]), arrow, worker_sys.executable)

    try:
        found = sc.parallelize(range(slots), slots).mapPartitions(probe).collect()
    except Exception as exc:  # noqa: BLE001 - the executors could not start Python: say why
        raise UdflowError(_startup_failure(python, str(exc))) from None
    _judge(found)


def _judge(found: list[tuple]) -> None:
    """Raise the first thing missing from the executors' (Python version, pyarrow version,
    interpreter) as found."""
    for version, arrow, executable in found:
        if arrow is None:
            raise UdflowError(
                f"the executors' Python ({executable}) has no pyarrow; udflow runs functions over "
                f"Arrow batches: install pyarrow>={'.'.join(map(str, MIN_PYARROW))} there, or point "
                "spark.pyspark.python at an interpreter that has it"
            )
        if tuple(int(p) for p in arrow.split(".")[:2]) < MIN_PYARROW:
            raise UdflowError(
                f"the executors' Python ({executable}) has pyarrow {arrow}; PySpark needs "
                f"pyarrow>={'.'.join(map(str, MIN_PYARROW))}: upgrade it there"
            )
        if tuple(version) != sys.version_info[:2]:
            raise UdflowError(
                f"the executors' Python ({executable}) is Python {'.'.join(map(str, version))}, the "
                f"driver's {sys.version_info[0]}.{sys.version_info[1]}; PySpark needs the same version on both"
            )


def check_local_python(python: str) -> None:
    """The check of `check_executors` for a local master, without a Spark job: its executors
    run `python` on this machine (this very interpreter, as a rule)."""
    # the same path, not the same binary: a venv's python links to its base interpreter, and
    # which packages it finds depends on the path it was started by
    if os.path.abspath(python) == os.path.abspath(sys.executable):
        found = [(tuple(sys.version_info[:2]), _pyarrow_version(), sys.executable)]
    else:
        found = [_probe_interpreter(python)]
    _judge(found)


def _pyarrow_version() -> str | None:
    try:
        import pyarrow
    except ImportError:
        return None
    return pyarrow.__version__


def _probe_interpreter(python: str) -> tuple:
    script = (
        "import sys\ntry:\n import pyarrow; a = pyarrow.__version__\nexcept ImportError:\n a = None\n"
        "print(repr((tuple(sys.version_info[:2]), a, sys.executable)))"
    )
    try:
        done = subprocess.run([python, "-c", script], capture_output=True, text=True, timeout=60)
    except OSError as exc:
        raise UdflowError(_startup_failure(python, f"Cannot run program: {exc}")) from None
    if done.returncode != 0:
        raise UdflowError(_startup_failure(python, done.stderr)) from None
    return ast.literal_eval(done.stdout.strip())


def _startup_failure(python: str, text: str) -> str:
    if "Cannot run program" in text or "No such file or directory" in text:
        return (
            f"the executors cannot start Python {python!r} (no such program on the workers); set "
            "spark.pyspark.python (or PYSPARK_PYTHON) to an interpreter present on every worker"
        )
    if "PYTHON_VERSION_MISMATCH" in text or "different version" in text:
        line = next((ln for ln in text.splitlines() if "version" in ln), "").strip()
        return f"the executors' Python {python!r} is another Python version than the driver's: {line}"
    if "No module named" in text:
        line = next(ln for ln in text.splitlines() if "No module named" in ln).strip()
        return f"the executors' Python {python!r} lacks a module PySpark needs: {line}"
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), text)
    return f"the executors' Python {python!r} failed to start: {first[:300]}"


# ---------------------------------------------------------------------------
# The user's functions and the modules they reach
# ---------------------------------------------------------------------------


def functions_of(node: Node) -> list[Callable]:
    """Every function a plan runs on the executors."""
    out = []
    for n in node.walk():
        if isinstance(n, Custom):
            out += [f for f in (n.op_type.reference, n.op_type.spark) if f is not None]
        elif n.function is not None:
            out.append(n.function)
    return out


def user_modules(roots: list[Any]) -> list[types.ModuleType]:
    """The modules of the user's own code (not installed) that `roots` reach, transitively."""
    found: dict[str, types.ModuleType] = {}
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        module = _module_of(obj)
        if module is None:
            continue
        if is_user_module(module):
            found[module.__name__] = module
        elif module.__name__ != "__main__":  # __main__'s code is the user's too: follow it
            continue
        todo.extend(_referenced(obj))
    return list(found.values())


def _module_of(obj: Any) -> types.ModuleType | None:
    if isinstance(obj, types.ModuleType):
        return obj
    name = getattr(obj, "__module__", None) if isinstance(obj, (type, types.FunctionType)) else None
    if name is None and not isinstance(obj, (type, types.FunctionType)):
        name = getattr(type(obj), "__module__", None)  # a callable object: its class's module
    return sys.modules.get(name) if name else None


def _referenced(obj: Any) -> Iterator[Any]:
    """What a function's code can reach: the globals it names, its closure, its defaults;
    a partial's function and arguments; a callable object's class and attributes."""
    if isinstance(obj, types.FunctionType):
        names = set(_names(obj.__code__))
        yield from (obj.__globals__[n] for n in names if n in obj.__globals__)
        yield from (c.cell_contents for c in (obj.__closure__ or ()) if _filled(c))
        yield from (obj.__defaults__ or ())
        wrapped = getattr(obj, "__wrapped__", None)
        if wrapped is not None:
            yield wrapped
    elif isinstance(obj, type):
        for value in vars(obj).values():
            if inspect.isfunction(value):
                yield value
    elif isinstance(obj, types.ModuleType):
        return
    else:
        inner = getattr(obj, "func", None)
        if inner is not None:
            yield inner
            yield from getattr(obj, "args", ())
        yield type(obj)
        yield from (getattr(obj, "__dict__", None) or {}).values()


def _names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _names(const)


def _filled(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def is_user_module(module: types.ModuleType) -> bool:
    """A module of the user's own code: it has a source file outside the standard library and
    site-packages, and is not udflow's (shipped as a zip) or PySpark's."""
    if module.__name__.split(".")[0] in _OWN_PACKAGES or module.__name__ == "__main__":
        return False  # __main__ is pickled by value by cloudpickle itself
    file = getattr(module, "__file__", None)
    if not file:
        return False
    path = os.path.realpath(file)
    return not any(path.startswith(root + os.sep) for root in _installed_roots())


@lru_cache(maxsize=1)
def _installed_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots |= set(site.getsitepackages()) | {site.getusersitepackages()}
    roots |= {os.path.join(p, "lib") for p in (sys.base_prefix, sys.base_exec_prefix)}
    return tuple(sorted({os.path.realpath(r) for r in roots}))
