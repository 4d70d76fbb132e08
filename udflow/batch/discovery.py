"""Finding pipelines: every module-level `Flow` and every `@pipeline` function of a file.

A *pipeline* is named `path/to/file.py::name`. Paths are files or folders
(searched recursively for `*.py`, skipping hidden folders, `__pycache__` and
files whose name starts with `_`). In a module, the pipelines are

- every function decorated with `@udflow.pipeline`: it is called with no
  arguments and must return a `Flow`;
- every module-level `Flow` value, except names starting with `_`, bare
  sources (no operator to optimize), and flows that another module-level
  flow of the same module is built on (intermediate steps).

Modules are imported the way pytest imports test files ("prepend" mode): a file
inside a package (folders with `__init__.py`) is imported under its dotted name
with the package's root put on `sys.path`; a loose file under a private name with
its own folder on `sys.path`. Both the parent process and each worker import the
module themselves; nothing of a user module is ever pickled.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
import zlib
from dataclasses import dataclass
from types import ModuleType
from typing import Callable, Iterator, Optional, Union

from udflow.flow import Flow
from udflow.plan import Source

PIPELINE_MARK = "__udflow_pipeline__"


def pipeline(fn: Callable[[], Flow]) -> Callable[[], Flow]:
    """Mark `fn` (no arguments, returns a `Flow`) as a pipeline for the `udflow` command.

        @uf.pipeline
        def q15():
            return build_flow("data/tpch")

    The function itself is returned unchanged, so it can still be called directly.
    """
    if not callable(fn):
        from udflow.errors import FlowConstructionError

        raise FlowConstructionError(f"@pipeline must decorate a function, got {type(fn).__name__} {fn!r}")
    setattr(fn, PIPELINE_MARK, True)
    return fn


@dataclass(frozen=True)
class PipelineRef:
    """Where a pipeline lives: `file` (absolute), `attr` (its name in the module)."""

    file: str
    attr: str

    @property
    def name(self) -> str:
        return f"{display_path(self.file)}::{self.attr}"


class PipelineLoadError(Exception):
    """A module could not be imported or a pipeline could not be built; `reason` says why."""

    def __init__(self, stage: str, reason: str):
        super().__init__(reason)
        self.stage = stage
        self.reason = reason


def display_path(path: str) -> str:
    """The path relative to the working directory when it is below it, else absolute."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def find_files(paths: list[str]) -> list[str]:
    """The `.py` files named by `paths` (files or folders), absolute, sorted, without duplicates."""
    found: dict[str, None] = {}
    for path in paths:
        if os.path.isdir(path):
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
                for f in sorted(files):
                    if f.endswith(".py") and not f.startswith("_"):
                        found[os.path.abspath(os.path.join(folder, f))] = None
        elif os.path.isfile(path):
            found[os.path.abspath(path)] = None
        else:
            raise FileNotFoundError(f"no file or folder at {path!r}")
    return sorted(found)


def split_target(target: str) -> tuple[str, Optional[str]]:
    """`'dir/file.py::name'` -> `('dir/file.py', 'name')`; no `::` -> `(target, None)`."""
    path, sep, name = target.partition("::")
    return path, (name if sep else None)


# ---------------------------------------------------------------------------
# Importing
# ---------------------------------------------------------------------------


def _package_root(file: str) -> tuple[str, str]:
    """(folder to put on sys.path, dotted module name), walking up through `__init__.py` folders."""
    folder, stem = os.path.split(file)
    parts = [os.path.splitext(stem)[0]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, pkg = os.path.split(folder)
        parts.insert(0, pkg)
    return folder, ".".join(parts)


UDFLOW_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it was raised from (a UdfRuntimeError's cause is the
    user's own exception, whose traceback holds the user's frame), outermost first."""
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _where(exc: BaseException, file: str) -> str:
    """` (file.py:12)`: the deepest frame inside `file` of the traceback of `exc` or of the
    exceptions it was raised from, else the deepest frame outside udflow's own code; never
    a frame of udflow itself (the user cannot act on one)."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f" ({display_path(exc.filename or file)}:{exc.lineno})"
    frames = [f for e in reversed(_chain(exc)) for f in traceback.extract_tb(e.__traceback__)]
    mine = [f for f in frames if os.path.abspath(f.filename) == file]
    users = [f for f in frames if not os.path.abspath(f.filename).startswith(UDFLOW_DIR + os.sep)]
    frame = (mine or users or [None])[-1]
    return f" ({display_path(frame.filename)}:{frame.lineno})" if frame else ""


def describe_error(exc: BaseException, file: str) -> str:
    """`Type: message (file.py:line)` — one line a user can act on."""
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {message}{_where(exc, file)}".replace(": (", " (")


def load_module(file: str) -> ModuleType:
    """Import `file` (see the module docstring); raises PipelineLoadError('import', reason)."""
    file = os.path.abspath(file)
    root, dotted = _package_root(file)
    for entry in (os.getcwd(), root):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    try:
        if "." in dotted:
            module = importlib.import_module(dotted)
            if os.path.abspath(getattr(module, "__file__", "") or "") != file:
                raise ImportError(f"module {dotted} resolves to {module.__file__}, not {file}")
            return module
        name = f"udflow_pipeline_{dotted}_{zlib.crc32(file.encode()):08x}"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        return module
    except (Exception, SystemExit) as exc:
        raise PipelineLoadError("import", describe_error(exc, file)) from exc


def _intermediate(flow: Flow, others: list[Flow]) -> bool:
    """Is `flow` a strict subtree of another flow of the module (a step another flow builds on)?"""
    for other in others:
        if other is not flow and other.root != flow.root:
            if any(node == flow.root for node in other.root.walk()):
                return True
    return False


def pipeline_names(module: ModuleType) -> list[str]:
    """The module's pipelines, in definition order (see the module docstring)."""
    names: list[str] = []
    flows = {k: v for k, v in vars(module).items() if isinstance(v, Flow) and not k.startswith("_")}
    for key, value in vars(module).items():
        if key.startswith("_"):
            continue
        if callable(value) and getattr(value, PIPELINE_MARK, False) is True:
            if getattr(value, "__module__", None) == module.__name__:
                names.append(key)
        elif key in flows:
            if isinstance(value.root, Source) or _intermediate(value, list(flows.values())):
                continue
            names.append(key)
    return names


def build(module: ModuleType, ref: PipelineRef) -> Flow:
    """The Flow of one pipeline; raises PipelineLoadError('build', reason) when it cannot be made."""
    try:
        value = getattr(module, ref.attr)
    except AttributeError:
        raise PipelineLoadError("build", f"{ref.name}: the module has no attribute {ref.attr!r}") from None
    if isinstance(value, Flow):
        return value
    if not callable(value):
        raise PipelineLoadError("build", f"{ref.name} is a {type(value).__name__}, neither a Flow nor a function")
    try:
        flow = value()
    except (Exception, SystemExit) as exc:
        raise PipelineLoadError("build", describe_error(exc, ref.file)) from exc
    if not isinstance(flow, Flow):
        raise PipelineLoadError("build", f"{ref.name} returned {type(flow).__name__}, not a Flow")
    return flow


@dataclass(frozen=True)
class BrokenFile:
    """A file whose module could not be imported: it stands for its pipelines in the report."""

    file: str
    stage: str
    reason: str

    @property
    def name(self) -> str:
        return display_path(self.file)


def discover(paths: list[str]) -> Iterator[Union[tuple[PipelineRef, ModuleType], BrokenFile]]:
    """Every pipeline of every file under `paths`, or a BrokenFile for a module that fails to import."""
    for file in find_files(paths):
        try:
            module = load_module(file)
        except PipelineLoadError as err:
            yield BrokenFile(file, err.stage, err.reason)
            continue
        for attr in pipeline_names(module):
            yield PipelineRef(file, attr), module


def resolve(target: str) -> PipelineRef:
    """`PATH::NAME` -> PipelineRef; PATH alone is allowed when its module has exactly one pipeline."""
    path, name = split_target(target)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no file at {path!r} (expected PATH::NAME, e.g. pipelines/q7.py::q7)")
    file = os.path.abspath(path)
    if name:
        return PipelineRef(file, name)
    names = pipeline_names(load_module(file))
    if len(names) != 1:
        raise LookupError(
            f"{display_path(file)} has {len(names)} pipelines ({', '.join(names) or 'none'}); "
            f"name one as {display_path(file)}::NAME"
        )
    return PipelineRef(file, names[0])
