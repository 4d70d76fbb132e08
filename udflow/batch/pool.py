"""Running tasks in worker processes, isolated from each other's failures.

Workers are started with the *spawn* method: each is a fresh interpreter that
imports the pipeline's module itself, so nothing of a user module is pickled
and no state leaks from the parent (or from a forked Spark/JVM).

Failure isolation has two layers. Inside a worker, a task catches every
exception of the pipeline and returns it as a failed outcome. A worker that
dies (a crash in native code, `os._exit`) breaks the pool and every task still
in it; those tasks are re-run one per fresh single-worker pool, so the one
that kills its worker is identified and the innocent ones still finish.
"""

from __future__ import annotations

import multiprocessing
import queue as queue_module
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Callable, Optional

from udflow.batch.outcome import failed


@dataclass(frozen=True)
class Task:
    """One unit of work: `fn(*args, events)` in a worker; `name` keys progress and results."""

    name: str
    file: str
    attr: Optional[str]
    fn: Callable[..., dict]
    args: tuple


def run_tasks(tasks: list[Task], jobs: int, reporter) -> dict[str, dict]:
    """Outcomes of all `tasks`, keyed by name, computed by `jobs` worker processes."""
    if not tasks:
        return {}
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        events = manager.Queue()
        outcomes, broken = _run_pool(tasks, max(1, jobs), reporter, events, ctx)
        for task in broken:  # one at a time: the task that kills its worker is found
            alone, still_broken = _run_pool([task], 1, reporter, events, ctx)
            outcomes.update(alone)
            for t in still_broken:
                outcome = failed(t.name, t.file, t.attr, "worker",
                                 "the worker process died while running this pipeline "
                                 "(a crash in native code or an exit from the pipeline's code)")
                outcomes[t.name] = outcome
                reporter.finish(t.name, outcome)
    return outcomes


def _drain(events, reporter) -> None:
    while True:
        try:
            name, stage = events.get_nowait()
        except queue_module.Empty:
            return
        except (EOFError, OSError):
            return
        reporter.stage(name, stage)


def _run_pool(tasks, jobs, reporter, events, ctx) -> tuple[dict[str, dict], list[Task]]:
    outcomes: dict[str, dict] = {}
    broken: list[Task] = []
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=ctx) as pool:
        futures = {pool.submit(t.fn, *t.args, events): t for t in tasks}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
            _drain(events, reporter)
            for future in done:
                task = futures[future]
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    broken.append(task)
                    continue
                except BaseException as exc:  # the task could not be sent or received
                    outcome = failed(task.name, task.file, task.attr, "worker", f"{type(exc).__name__}: {exc}")
                outcomes[task.name] = outcome
                reporter.finish(task.name, outcome)
    _drain(events, reporter)
    return outcomes, broken


def send(events: Any, name: str, stage: str) -> None:
    """Tell the parent that `name` entered `stage` (best effort: progress is not results)."""
    try:
        events.put((name, stage))
    except Exception:
        pass
