"""What a batch run shows: the summary table, the JSON file and the HTML page.

The JSON file is the batch's record and the input of `udflow verify FILE.json`:

    {"format": "udflow-batch-1", "udflow": "0.1.0", "properties": "analysis",
     "created": "...", "summary": {"pipelines": 23, "ok": 20, "failed": 3},
     "pipelines": [outcome, ...]}          (see udflow.batch.outcome)

The HTML page is one self-contained file: inline CSS, inline SVG plans, no
script, and a Content-Security-Policy that forbids every fetch, so it opens the
same from a mail attachment, a CI artifact or a laptop without network.
"""

from __future__ import annotations

import datetime
import json
import os
import re
from html import escape
from typing import Optional

import udflow
from udflow.batch.fingerprint import FORMAT
from udflow.batch.svg import plan_svg


def summary(outcomes: list[dict]) -> dict:
    ok = sum(o["status"] == "ok" for o in outcomes)
    return {"pipelines": len(outcomes), "ok": ok, "failed": len(outcomes) - ok}


def write_json(outcomes: list[dict], path: str, properties: str) -> None:
    document = {
        "format": FORMAT,
        "udflow": udflow.__version__,
        "properties": properties,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "summary": summary(outcomes),
        "pipelines": outcomes,
    }
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(document, fh, indent=1, default=str)


def read_json(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        document = json.load(fh)
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"{path} is not a file written by `udflow optimize --json` (format {FORMAT})")
    return document


# ---------------------------------------------------------------------------
# The summary table
# ---------------------------------------------------------------------------

HEADERS = ("pipeline", "operators", "alternatives", "est. speed-up", "rewrites applied", "time")


def _fmt_speedup(o: dict) -> str:
    s = o.get("speedup")
    return f"{s:.2f}x" if s else "-"


def _fmt_rewrites(o: dict) -> str:
    rules: dict[str, int] = {}
    for r in o.get("rewrites", ()):
        rules[r["rule"]] = rules.get(r["rule"], 0) + 1
    listed = ", ".join(f"{rule}" + (f" x{n}" if n > 1 else "") for rule, n in rules.items())
    return f"{len(o.get('rewrites', ()))}" + (f" ({listed})" if listed else "")


def _fmt_time(o: dict) -> str:
    return f"{o.get('seconds') or 0.0:.2f} s" + (" (cached)" if o.get("cached") else "")


def rows(outcomes: list[dict]) -> list[tuple[str, ...]]:
    return [
        (o["name"], str(o["operators"]), str(o["alternatives"]), _fmt_speedup(o), _fmt_rewrites(o), _fmt_time(o))
        for o in outcomes
        if o["status"] == "ok"
    ]


def failures(outcomes: list[dict]) -> list[str]:
    return [f"{o['name']}  [{o['stage']}{', cached' if o.get('cached') else ''}] {o['reason']}"
            for o in outcomes if o["status"] != "ok"]


def plain_table(outcomes: list[dict]) -> str:
    body = rows(outcomes)
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(HEADERS)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(HEADERS, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in body]
    return "\n".join(lines) + "\n" + _footer(outcomes)


def _footer(outcomes: list[dict]) -> str:
    s = summary(outcomes)
    text = f"\n{s['ok']} of {s['pipelines']} pipelines optimized"
    broken = failures(outcomes)
    if broken:
        text += f", {len(broken)} failed:\n" + "\n".join(f"  {line}" for line in broken)
    return text


def common_folder(names: list[str]) -> str:
    """The folder every pipeline name starts with (`tests/pipelines/`), or ''."""
    paths = [n.partition("::")[0] for n in names]
    if not paths:
        return ""
    folder = os.path.commonpath(paths) if len(paths) > 1 else os.path.dirname(paths[0])
    if folder in paths:  # one file: its folder, not the file itself
        folder = os.path.dirname(folder)
    return folder.rstrip("/") + "/" if folder else ""


def print_summary(outcomes: list[dict], console) -> None:
    """A rich table on a terminal, a plain text table otherwise (for logs and pipes).

    On a terminal, the pipeline names are shortened from the left (the folder they all
    share is said once, in the title) and wrapped, never cut: a name cut at the width of
    the terminal may name another pipeline, or none."""
    if console.is_terminal:
        from rich.table import Table

        body = rows(outcomes)
        folder = common_folder([r[0] for r in body])
        table = Table(title="udflow optimize" + (f": pipelines under {folder}" if folder else ""))
        for i, h in enumerate(HEADERS):
            table.add_column(h, justify="right" if 0 < i < 4 else "left", overflow="fold")
        for r in body:
            table.add_row(r[0][len(folder):], *r[1:])
        console.print(table)
        console.print(_footer(outcomes), highlight=False, markup=False)
    else:
        print(plain_table(outcomes))


# ---------------------------------------------------------------------------
# The HTML page
# ---------------------------------------------------------------------------

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em} h2{font-size:1.25em;margin:1.6em 0 .4em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0} th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f6} td.num{text-align:right;white-space:nowrap}
.ok{color:#1e7b34} .failed{color:#b3261e;font-weight:600}
.plans{display:flex;flex-wrap:wrap;gap:2em;align-items:flex-start}
.plans figure{margin:0;overflow-x:auto;max-width:100%} figcaption{font-weight:600;margin-bottom:.3em}
svg.plan text{font:12px ui-monospace,Menlo,Consolas,monospace;fill:#222} svg.plan text.rows{font-size:10px;fill:#777}
pre{background:#f7f7f9;border:1px solid #e3e3e8;padding:.6em;overflow-x:auto;font-size:12px}
details{margin:.3em 0} summary{cursor:pointer}
.muted{color:#666}
"""


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
        f"<link rel=\"icon\" href=\"data:,\"><title>{escape(title)}</title><style>{CSS}</style></head>"
        f"<body>{body}</body></html>\n"
    )


def _anchor(i: int) -> str:
    return f"p{i}"


def _summary_html(outcomes: list[dict]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in ("pipeline", "status", *HEADERS[1:]))
    body = []
    for i, o in enumerate(outcomes):
        link = f'<a href="#{_anchor(i)}">{escape(o["name"])}</a>'
        if o["status"] == "ok":
            cells = [f'<td class="ok">ok</td>', f'<td class="num">{o["operators"]}</td>',
                     f'<td class="num">{o["alternatives"]}</td>', f'<td class="num">{escape(_fmt_speedup(o))}</td>',
                     f"<td>{escape(_fmt_rewrites(o))}</td>", f'<td class="num">{escape(_fmt_time(o))}</td>']
        else:
            cells = [f'<td class="failed">failed</td>',
                     f'<td colspan="5">[{escape(o["stage"])}] {escape(user_facing(o["reason"]))}</td>']
        body.append(f"<tr><td>{link}</td>{''.join(cells)}</tr>")
    return f"<table class=\"summary\"><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _cost(value: Optional[float]) -> str:
    """An estimated cost with its unit: the cost model estimates seconds."""
    return "unknown" if value is None else f"{value:.4g} s"


def user_facing(reason: str) -> str:
    """A failure's reason without locations inside udflow's own code (` (.../udflow/x.py:12)`):
    the user can act on their file and line, not on udflow's."""
    udflow_dir = re.escape(os.path.dirname(os.path.abspath(udflow.__file__)) + os.sep)
    return re.sub(r" \((?:" + udflow_dir + r"|udflow/)[^():]*\.py:\d+\)", "", reason)


def _certificate_html(n: int, cert: dict) -> str:
    facts = "\n".join(cert.get("facts", ())) or "(none)"
    smt = "\n\n".join(f"; answer: {answer}\n{query}" for query, answer in cert.get("smt", ()))
    return (
        f"<details><summary>{n}. <b>{escape(cert.get('rule', '?'))}</b> on "
        f"{escape(', '.join(cert.get('operators', ())))}</summary>"
        f"<table><tr><th>before</th><th>after</th></tr><tr><td><pre>{escape(cert.get('before', ''))}</pre></td>"
        f"<td><pre>{escape(cert.get('after', ''))}</pre></td></tr></table>"
        f"<div>facts</div><pre>{escape(facts)}</pre>"
        + (f"<div>Z3 queries</div><pre>{escape(smt)}</pre>" if smt else "")
        + "</details>"
    )


def _pipeline_html(i: int, o: dict) -> str:
    title = f'<h2 id="{_anchor(i)}">{escape(o["name"])}</h2>'
    if o["status"] != "ok":
        return title + f'<p class="failed">failed while {escape(o["stage"])}: {escape(user_facing(o["reason"]))}</p>'
    moved = frozenset(label for r in o.get("rewrites", ()) for label in r["operators"])
    plans = (
        '<div class="plans">'
        f'<figure><figcaption>as written — estimated cost {_cost(o.get("original_cost"))}</figcaption>'
        f'{plan_svg(o["original_plan"], "plan as written", uid=f"{i}o")}</figure>'
        f'<figure><figcaption>chosen — estimated cost {_cost(o.get("best_cost"))}</figcaption>'
        f'{plan_svg(o["best_plan"], "chosen plan", moved, uid=f"{i}b")}</figure></div>'
    )
    facts = (
        f'<p>{o["operators"]} operators, {o["alternatives"]} alternative plans'
        + (f' ({escape(str(o["search"]))} search)' if o.get("search") else "")
        + f', estimated speed-up {escape(_fmt_speedup(o))}, optimized in {escape(_fmt_time(o))}.'
        ' Operators moved by a rewrite have a red border.</p>'
    )
    certs = o.get("certificates", ())
    rewrites = "<h3>Rewrites and their certificates</h3>" + (
        "".join(_certificate_html(n, c) for n, c in enumerate(certs, 1)) if certs
        else "<p class=\"muted\">none: the plan as written is the cheapest valid plan.</p>"
    )
    explain = f"<details><summary>explain</summary><pre>{escape(o.get('explain', ''))}</pre></details>"
    return title + facts + plans + rewrites + explain


def html_report(outcomes: list[dict], properties: str) -> str:
    s = summary(outcomes)
    created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    body = (
        f"<h1>udflow optimize</h1><p class=\"muted\">udflow {escape(udflow.__version__)}, properties: "
        f"{escape(properties)}, {escape(created)}. {s['ok']} of {s['pipelines']} pipelines optimized, "
        f"{s['failed']} failed.</p>"
        + _summary_html(outcomes)
        + "".join(_pipeline_html(i, o) for i, o in enumerate(outcomes))
    )
    return _page("udflow optimize report", body)


def write_html(outcomes: list[dict], path: str, properties: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(html_report(outcomes, properties))
