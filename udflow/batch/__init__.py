"""Batch optimization of many pipelines: what the `udflow` command is made of.

    discovery   find the pipelines in files and folders (`file.py::name`)
    fingerprint a stable hash of a pipeline: its source, its functions' code, the rule set
    cache       results on disk under `.udflow-cache/`, keyed by that hash
    outcome     one pipeline's result as plain JSON data (plans, costs, certificates)
    runner      optimize a batch in worker processes, with progress and failure isolation
    verify      re-check certificates with the independent checker, compare sampled bags
    report      the summary table, the JSON file and the self-contained HTML page
    svg         plan trees drawn as inline SVG (no Graphviz needed)

This package is import-light on purpose: `udflow.pipeline` lives here and is
imported by `udflow/__init__.py`.
"""
