"""Progress of a batch: a rich bar per pipeline on a terminal, plain lines otherwise.

A reporter hears four things: the batch's pipelines (`begin`), a pipeline
entering a stage (`stage`: "importing", "optimizing", "checking"; a long search
also sends "optimizing: <its progress>" about once a second), a
pipeline's outcome (`finish`) and the end (`end`). Stages map onto a bar of
three steps: queued -> importing -> working -> done.
"""

from __future__ import annotations

import sys
from typing import Optional, TextIO

_STEP = {"queued": 0, "importing": 1, "optimizing": 2, "checking": 2, "done": 3}


def _verdict(outcome: dict) -> str:
    if outcome["status"] != "ok":
        return f"FAILED ({outcome.get('stage')}): {outcome.get('reason')}"
    if "verdict" in outcome:
        return outcome["verdict"]
    speedup = outcome.get("speedup")
    extra = f", est. speed-up {speedup:.2f}x" if speedup else ""
    return f"ok{' (cached)' if outcome.get('cached') else ''}: {outcome.get('alternatives')} alternatives{extra}"


class PlainReporter:
    """One line per finished pipeline, `[ 3/20] name  verdict  1.23 s`, for logs and pipes."""

    def __init__(self, stream: Optional[TextIO] = None):
        self.stream = stream or sys.stderr
        self.total = 0
        self.done = 0

    def begin(self, names: list[str]) -> None:
        self.total = len(names)

    def stage(self, name: str, stage: str) -> None:
        if ": " in stage:  # a long search's progress ("optimizing: exploring (1,234), 2.0 s")
            print(f"      {name}: {stage}", file=self.stream, flush=True)

    def finish(self, name: str, outcome: dict) -> None:
        self.done += 1
        width = len(str(self.total))
        seconds = outcome.get("seconds") or 0.0
        print(f"[{self.done:>{width}}/{self.total}] {name}  {_verdict(outcome)}  {seconds:.2f} s",
              file=self.stream, flush=True)

    def end(self) -> None:
        pass


class RichReporter:
    """A live rich display with one progress bar per pipeline."""

    def __init__(self, console):
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(bar_width=20),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            console=console,
        )
        self.tasks: dict[str, int] = {}

    def begin(self, names: list[str]) -> None:
        self.progress.start()
        for name in names:
            self.tasks[name] = self.progress.add_task(name, total=3, status="queued", start=False)

    def stage(self, name: str, stage: str) -> None:
        task = self.tasks[name]
        self.progress.start_task(task)
        self.progress.update(task, completed=_STEP.get(stage.split(":")[0], 1), status=stage)

    def finish(self, name: str, outcome: dict) -> None:
        task = self.tasks[name]
        self.progress.start_task(task)
        ok = outcome["status"] == "ok"
        status = _verdict(outcome)
        self.progress.update(task, completed=3, status=f"[green]{status}" if ok else f"[red]{status}")
        self.progress.stop_task(task)

    def end(self) -> None:
        self.progress.stop()


def reporter_for(console) -> "PlainReporter | RichReporter":
    """A rich display on an interactive terminal, plain lines on stderr otherwise."""
    if console is not None and console.is_terminal:
        return RichReporter(console)
    return PlainReporter()
