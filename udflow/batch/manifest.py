"""The batch manifest: answering an unchanged batch without importing a single pipeline module.

The results cache (udflow.batch.cache) is keyed per pipeline by what its
result depends on, and those keys need the pipelines built: every module
imported, every pipeline function called. On a repository where nothing
changed that alone costs more than the answer is worth (importing pyarrow,
reading parquet schemas, building automata). So a run also records, per batch
(same paths, options, working directory, interpreter and environment), what
that discovery depended on:

    files      every file of Python code loaded outside the standard library and
               site-packages (the pipeline modules, their helpers, udflow itself),
               with its content hash
    found      the .py files the paths expanded to
    data       every file under every source path the pipelines read: size and
               modification time (a file added to a source folder counts too)
    dirs       the modification time of the site-packages folders (installing or
               removing a package changes it)
    entries    per pipeline its cache key, or the import/build failure itself

When all of it is unchanged, discovery would compute the same keys, so the
outcomes come straight from the cache. Anything changed, missing or unreadable
means a normal run. Like any build tool's dependency record, it assumes a
module's top level depends on its code, its data, the installed packages and
the environment, not on the clock or the network; `--no-cache` forces.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import sysconfig
from typing import Iterable, Optional

from udflow.batch.cache import ResultCache
from udflow.batch.discovery import find_files
from udflow.batch.fingerprint import FORMAT, file_hash, rule_set_hash

VOLATILE_ENV = frozenset({"_", "OLDPWD", "PYTEST_CURRENT_TEST", "COLUMNS", "LINES", "SHLVL"})


def batch_key(paths: list[str], properties: str) -> str:
    env = sorted((k, v) for k, v in os.environ.items() if k not in VOLATILE_ENV)
    parts = [FORMAT, os.getcwd(), sys.executable, sys.version, properties, repr(sorted(map(os.path.abspath, paths))),
             repr(env)]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def _installed_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots)


def code_files() -> list[str]:
    """Files of the modules loaded in this process that are neither stdlib nor installed packages."""
    roots = _installed_roots()
    files = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and os.path.isfile(path):
            real = os.path.realpath(path)
            if not real.startswith(roots):
                files.add(real)
    return sorted(files)


def _data_stats(paths: Iterable[str]) -> dict[str, list[int]]:
    stats = {}
    for path in paths:
        files = [path] if os.path.isfile(path) else [
            os.path.join(d, f) for d, _, names in os.walk(path) for f in names]
        for f in files:
            st = os.stat(f)
            stats[f] = [st.st_size, st.st_mtime_ns]
    return stats


def _dir_stats() -> dict[str, int]:
    """Modification times of the site-packages folders (a package installed or removed)."""
    paths = sysconfig.get_paths()
    folders = sorted({paths[k] for k in ("purelib", "platlib") if k in paths})
    return {d: os.stat(d).st_mtime_ns for d in folders if os.path.isdir(d)}


def _path(cache: ResultCache, key: str) -> str:
    return os.path.join(cache.folder, "batches", f"{key}.json")


def record(cache: ResultCache, paths: list[str], properties: str, entries: list[dict],
           source_paths: Iterable[str]) -> None:
    """Write the manifest of the discovery that just ran (call it after every pipeline was built)."""
    manifest = {
        "files": {f: file_hash(f) for f in code_files()},
        "found": find_files(paths),
        "sources": sorted(set(source_paths)),
        "data": _data_stats(sorted(set(source_paths))),
        "dirs": _dir_stats(),
        "rule_set": rule_set_hash(),
        "entries": entries,
    }
    target = _path(cache, batch_key(paths, properties))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = f"{target}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(manifest, fh)
    os.replace(tmp, target)


def replay(cache: ResultCache, paths: list[str], properties: str) -> Optional[list[dict]]:
    """The outcomes of an unchanged batch from the cache, or None when anything may have changed."""
    try:
        with open(_path(cache, batch_key(paths, properties)), encoding="utf-8") as fh:
            manifest = json.load(fh)
        unchanged = (
            manifest["found"] == find_files(paths)
            and manifest["rule_set"] == rule_set_hash()
            and manifest["dirs"] == _dir_stats()
            and manifest["data"] == _data_stats(manifest["sources"])
            and all(file_hash(f) == h for f, h in manifest["files"].items())
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not unchanged:
        return None
    outcomes = []
    for entry in manifest["entries"]:
        if "outcome" in entry:
            outcomes.append(entry["outcome"])
            continue
        hit = cache.get(entry["key"])
        if hit is None:
            return None
        outcomes.append({**hit, "cached": True})
    return outcomes
