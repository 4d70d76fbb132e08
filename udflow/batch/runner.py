"""Optimizing a batch of pipelines: discovery, cache look-up, workers, outcomes.

    optimize_batch(paths, options, reporter) -> [outcome, ...]

0. When the batch manifest (udflow.batch.manifest) shows that nothing the
   last run's discovery depended on changed, its outcomes come straight from
   the cache: nothing is imported, nothing is built.
1. Otherwise the parent imports every module and builds every pipeline, which is cheap,
   to name the pipelines and compute each one's cache key (udflow.batch.fingerprint).
   A module that fails to import, or a pipeline that fails to build, is a
   failed outcome right away.
2. Cached results are taken as they are; the rest become tasks.
3. Tasks run in spawn worker processes (udflow.batch.pool); each worker imports
   the module itself, builds the pipeline again and calls `udflow.optimize`.
4. Outcomes go into the cache: results, and failures of the optimizer itself,
   which the same inputs would repeat (the key covers every input). A module
   that fails to import or a pipeline that fails to build is found again by the
   parent at no cost; a worker that died is retried.

Outcomes come back in discovery order (file, then definition order).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from udflow.batch import discovery, manifest
from udflow.batch.cache import ResultCache
from udflow.batch.fingerprint import pipeline_key, rule_set_hash
from udflow.batch.outcome import failed, from_optimized
from udflow.batch.pool import Task, run_tasks, send


@dataclass(frozen=True)
class Options:
    properties: str = "analysis"
    jobs: int = 1
    budget_s: Optional[float] = None  # seconds per pipeline's search (`optimize(budget_s=)`)
    cache: Optional[ResultCache] = ResultCache()  # None: --no-cache


def optimize_batch(paths: list[str], options: Options, reporter) -> list[dict]:
    """Optimize every pipeline under `paths`; one outcome per pipeline (or broken file)."""
    if options.cache:
        replayed = manifest.replay(options.cache, paths, options.properties)
        if replayed is not None:
            reporter.begin([o["name"] for o in replayed])
            for outcome in replayed:
                reporter.finish(outcome["name"], outcome)
            reporter.end()
            return replayed
    order: list[str] = []
    ready: dict[str, dict] = {}
    tasks: list[Task] = []
    keys: dict[str, str] = {}
    source_paths: set[str] = set()
    for item in discovery.discover(paths):
        if isinstance(item, discovery.BrokenFile):
            order.append(item.name)
            ready[item.name] = failed(item.name, item.file, None, item.stage, item.reason)
            continue
        ref, module = item
        order.append(ref.name)
        try:
            flow = discovery.build(module, ref)
        except discovery.PipelineLoadError as err:
            ready[ref.name] = failed(ref.name, ref.file, ref.attr, err.stage, err.reason)
            continue
        key = pipeline_key(ref.name, ref.file, flow.root, options.properties)
        keys[ref.name] = key
        source_paths.update(n.path for n in flow.sources if n.path)
        hit = options.cache.get(key) if options.cache else None
        if hit is not None:
            ready[ref.name] = {**hit, "cached": True}
        else:
            tasks.append(Task(ref.name, ref.file, ref.attr, optimize_in_worker,
                              (ref.file, ref.attr, options.properties, key, options.budget_s)))
    reporter.begin(order)
    for name in order:
        if name in ready:
            reporter.finish(name, ready[name])
    done = run_tasks(tasks, options.jobs, reporter)
    for name, outcome in done.items():
        if options.cache and name in keys and cacheable(outcome):
            options.cache.put(keys[name], outcome)
    reporter.end()
    results = {**ready, **done}
    if options.cache and all(name in keys and cacheable(results[name]) or name not in keys for name in order):
        entries = [{"name": n, "key": keys[n]} if n in keys else {"name": n, "outcome": results[n]} for n in order]
        manifest.record(options.cache, paths, options.properties, entries, source_paths)
    return [results[name] for name in order]


def cacheable(outcome: dict) -> bool:
    """A result, or a failure the same inputs would repeat: the optimizer refusing the pipeline
    or one of its functions raising. A dead worker or exhausted memory is retried next time."""
    if outcome["status"] == "ok":
        return outcome.get("complete", True)  # a search the budget cut short may do better next time
    return outcome.get("stage") == "optimize" and not outcome["reason"].startswith(("MemoryError", "RecursionError"))


def optimize_one(flow: Any, properties: str, budget_s: Optional[float] = None,
                 progress: Optional[Callable] = None, resolution: Optional[float] = None) -> tuple[Any, dict, float]:
    """(Optimized, result fields, seconds) for one Flow, in this process; `progress(Progress)`
    hears about a long search about once a second; `resolution` None: the optimizer's default."""
    import udflow

    started = time.perf_counter()
    tolerance = {} if resolution is None else {"resolution": resolution}
    opt = udflow.optimize(flow, properties=properties, budget_s=budget_s, progress=progress, **tolerance)
    seconds = time.perf_counter() - started
    return opt, from_optimized(opt), seconds


def optimize_in_worker(file: str, attr: str, properties: str, key: str, budget_s: Optional[float],
                       events: Any) -> dict:
    """A worker's task: import, build, optimize one pipeline; every failure becomes an outcome."""
    ref = discovery.PipelineRef(file, attr)
    send(events, ref.name, "importing")
    started = time.perf_counter()
    try:
        module = discovery.load_module(file)
        flow = discovery.build(module, ref)
        send(events, ref.name, "optimizing")
        _, result, seconds = optimize_one(flow, properties, budget_s,
                                          lambda p: send(events, ref.name, f"optimizing: {p}"))
    except discovery.PipelineLoadError as err:
        return failed(ref.name, file, attr, err.stage, err.reason, time.perf_counter() - started)
    except (Exception, SystemExit) as exc:  # analysis, rules, Z3, cost model, a user function
        return failed(ref.name, file, attr, "optimize", discovery.describe_error(exc, file),
                      time.perf_counter() - started)
    return {"name": ref.name, "file": file, "attr": attr, **result,
            "seconds": seconds, "cached": False, "key": key, "rule_set": rule_set_hash()}
