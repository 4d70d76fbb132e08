"""The optimizer's clock: a time budget (`optimize(budget_s=...)`) and progress reports.

A search asks its clock, every few steps, whether the budget has run out; the clock
also calls `progress(Progress(...))` about once a second, which is how the CLI shows
a long optimization moving. Without a budget the clock never runs out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Optional


@dataclass(frozen=True)
class Progress:
    """Where a search is: its phase ("exploring", "costing", "enumerating", "improving"),
    how far (multi-expressions, plans or moves; phase-specific), seconds since it started."""

    phase: str
    done: Optional[int]
    elapsed: float
    budget_s: Optional[float]

    def __str__(self) -> str:
        budget = f" of {self.budget_s:g} s" if self.budget_s is not None else ""
        done = f" ({self.done:,})" if self.done is not None else ""
        return f"{self.phase}{done}, {self.elapsed:.1f} s{budget}"


class Clock:
    """One optimization's time budget and progress reports."""

    def __init__(
        self,
        budget_s: Optional[float] = None,
        progress: Optional[Callable[[Progress], None]] = None,
        every_s: float = 1.0,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        """`timer`: seconds from any origin (tests pass one that advances per call)."""
        self._timer = timer
        self.started = timer()
        self.budget_s = budget_s
        self.deadline = None if budget_s is None else self.started + budget_s
        self._progress = progress
        self._every_s = every_s
        self._next_report = self.started + every_s
        self.ran_out: Optional[str] = None  # the phase in which the budget ran out

    def expired(self, phase: str, done: Optional[int] = None) -> bool:
        """Whether the budget has run out (reporting progress when a report is due)."""
        now = self._timer()
        if self._progress is not None and now >= self._next_report:
            self._next_report = now + self._every_s
            self._progress(Progress(phase, done, now - self.started, self.budget_s))
        if self.deadline is not None and now >= self.deadline:
            if self.ran_out is None:
                self.ran_out = phase
            return True
        return False

    @property
    def elapsed(self) -> float:
        return self._timer() - self.started
