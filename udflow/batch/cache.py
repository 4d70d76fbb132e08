"""The results cache: one JSON file per pipeline result, named by its fingerprint key.

    .udflow-cache/
      results/<key>.json     an Outcome (see udflow.batch.outcome) as JSON

Writes go to a temporary file renamed into place, so two processes writing the
same key, or a run interrupted half-way, never leave a torn entry. What is
stored is decided by the runner (`udflow.batch.runner.cacheable`).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from typing import Optional

DEFAULT_DIR = ".udflow-cache"


@dataclass(frozen=True)
class ResultCache:
    folder: str = DEFAULT_DIR

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, "results", f"{key}.json")

    def get(self, key: str) -> Optional[dict]:
        if key.startswith("unstable-"):
            return None
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                return json.load(fh)
        except (OSError, ValueError):
            return None

    def put(self, key: str, record: dict) -> None:
        if key.startswith("unstable-"):
            return
        target = self._path(key)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(record, fh)
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
