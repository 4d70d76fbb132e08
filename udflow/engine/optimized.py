"""`Optimized`: the result of `uf.optimize`, and how it explains itself.

    opt = uf.optimize(flow)
    opt.best            the cheapest plan, a Flow whose hints carry its join strategies
    opt.original        the plan as written (costed the same way, with its own hints)
    opt.alternatives    the plans kept, cheapest first (see `Alternatives`); .mode, .count, .reason
    opt.certificates    the certificates of the exchanges that turn original into best
    opt.why_not(a, b)   why two operators may or may not be exchanged
    opt.explain()       both plans with estimated rows, the rewrites and their facts
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import networkx as nx

from udflow.engine.cost import CostModel, Estimate
from udflow.flow import Flow, properties_of
from udflow.plan import Cross, Match, Node, draw


MAX_FACTS = 10  # facts shown per rewrite in explain; the certificate holds them all


@dataclass(frozen=True)
class Alternative:
    """One valid reordering: its plan, estimated cost, rank and the certificates that prove it."""

    node: Node
    cost: float
    rank: int  # 1 = cheapest
    certificates: tuple = ()
    estimate: Optional[Estimate] = field(default=None, compare=False, repr=False)
    model: Optional[CostModel] = field(default=None, compare=False, repr=False)
    proved_for: tuple = field(default=(), compare=False, repr=False)  # `diagnostics.proved_for`
    # The field-flow check this plan passed (`udflow.fieldflow`): every field it relied on
    field_flow: Any = field(default=None, compare=False, repr=False)
    # What each operator emits on the first records of the sources (`udflow.samples`), taken on
    # the driver for the chosen plan: the Spark backend types Python output from it. () for the
    # other plans: their `to_spark()` takes it then (`Flow.to_spark`), their `collect()` on Spark
    samples: tuple = field(default=(), compare=False, repr=False)

    @property
    def hints(self) -> tuple[tuple[str, str], ...]:
        """The physical strategy of every Match and Cross, as the Flow's Spark hints."""
        return tuple(sorted(self.model.strategies(self.node).items())) if self.model else ()

    @property
    def flow(self) -> Flow:
        """The plan as a Flow, with its physical strategies as Spark hints and its samples."""
        return Flow(self.node, hints=self.hints, proved_for=self.proved_for if self.certificates else (),
                    samples=self.samples)

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(c.rule for c in self.certificates)

    def collect(self, engine: str = "spark", spark: Any = None, native: bool = True, fields=None) -> list[dict]:
        return self.flow.collect(engine=engine, spark=spark, native=native, fields=fields)

    def __str__(self) -> str:
        return f"#{self.rank} cost {self.cost:.4g}\n{draw(self.node)}"


class Alternatives(tuple):
    """The plans kept, cheapest first; each `Alternative.rank` is its rank among all plans.

    `mode`: the search that ran: "full" (every valid reordering costed; the `keep` cheapest
    are kept, and the plan as written), "pruned" (the cheapest plan per root operator and
    partitioning of the group search), "greedy" (the plans a steepest descent passed
    through) or "exact". `count`: plans in the space searched: every valid plan (full,
    exact), the plans of the explored memo (pruned), None (greedy, never counted).
    `considered`: plans streamed (full), multi-expressions (pruned), neighbours costed
    (greedy). `complete`: False when the budget ran out. `reason`: why this mode ran.
    `resolution`: the relative cost difference below which plans tie (`engine/ties.py`):
    the plans ranking #1 (none estimated better) come first, fewest rewrites first.
    `refused`: (plan, `FieldFlowVerdict`) of every plan the search found and the field-flow
    check refused (`udflow.fieldflow`); none is among the plans kept."""

    mode: str
    considered: int
    count: Optional[int]
    complete: bool
    reason: str
    resolution: float

    def __new__(cls, items, mode: str, considered: int, *, count: Optional[int] = None,
                complete: bool = True, reason: str = "", resolution: float = 0.0, refused: tuple = ()):
        self = super().__new__(cls, items)
        self.refused = refused
        self.mode = mode
        self.considered = considered
        self.count = count
        self.complete = complete
        self.reason = reason
        self.resolution = resolution
        return self


class Optimized:
    """What `uf.optimize` returns; see the module docstring."""

    def __init__(
        self,
        *,
        original: Alternative,
        alternatives: Alternatives,
        model: CostModel,
        properties: str,
        timings: dict[str, float],
        why_not: Callable[[str, str], Any],
        profiles: dict,
        origin: tuple = (),
    ) -> None:
        self._original = original
        self.origin = origin  # `uf.from_spark`: (parts kept as written, UDFs opened)
        self.alternatives = alternatives
        self.model = model
        self.properties = properties
        self.timings = timings
        self._why_not = why_not
        self.profiles = profiles

    # -- the results -------------------------------------------------------------

    @property
    def mode(self) -> str:
        return self.alternatives.mode

    @property
    def chosen(self) -> Alternative:
        return self.alternatives[0]

    @property
    def best(self) -> Flow:
        return self.chosen.flow

    @property
    def original(self) -> Flow:
        return self._original.flow

    @property
    def original_alternative(self) -> Alternative:
        return self._original

    @property
    def certificates(self) -> tuple:
        return self.chosen.certificates

    @property
    def speedup(self) -> float:
        """Estimated cost of the plan as written over the chosen plan's."""
        return self._original.cost / self.chosen.cost if self.chosen.cost else 1.0

    def why_not(self, a: Any, b: Any):
        """The RuleBook's verdict on exchanging operators `a` and `b` (labels or plan nodes)."""
        return self._why_not(_label(a), _label(b))

    # -- explain -------------------------------------------------------------------

    def explain(self, analyze: Any = False, spark: Any = None, verbose: bool = False) -> str:
        """The plans, the rewrites (one line each), what kept operators in place and how the
        chosen plan runs on Spark; `verbose=True` adds, per rewrite, the facts, the Z3 queries
        and the source lines behind it, the estimated costs and what each modelled function
        computes. `analyze=True` also runs both plans
        on Spark (`spark`, or the active or embedded session), operator by operator, and shows
        each operator's estimated rows beside its actual rows and time, with the q-errors and
        the measured speed-up (EXPLAIN ANALYZE); `analyze="chosen"` runs the chosen plan only,
        `analyze="reference"` both plans on the reference interpreter (small data: rows, no times)."""
        text = self._explain(verbose)
        if not analyze:
            return text
        return text + "\n\n" + "\n".join(self.analyze_lines(analyze, spark))

    def analyze_lines(self, analyze: Any = True, spark: Any = None) -> list[str]:
        """The EXPLAIN ANALYZE part of `explain(analyze=...)`."""
        from udflow.engine import analyzed

        run = analyzed.on_reference if analyze == "reference" else analyzed.on_spark(spark)
        where = "the reference interpreter" if analyze == "reference" else "Spark"
        rows = lambda n: self.model.estimate(n).rows  # noqa: E731
        both = analyze != "chosen" and self.chosen.node != self._original.node
        chosen = run(self.chosen.node, dict(self.chosen.hints))
        if both:  # the first run pays for starting Python workers and compiling: run it again after
            written = run(self._original.node, dict(self._original.hints))
            chosen = run(self.chosen.node, dict(self.chosen.hints)) if analyze != "reference" else chosen
        lines = [f"Analyzed on {where}: each operator counted with its inputs cached; time is its own step"
                 + ("; the chosen plan ran first, then the plan as written, then the chosen plan again "
                    "(shown), so that neither pays for warming up" if both and analyze != "reference" else ""), ""]
        lines += analyzed.section("Chosen plan", self.chosen.node, rows, chosen)
        if not both:
            return lines
        lines += [""] + analyzed.section("Plan as written", self._original.node, rows, written)
        speed = analyzed.speedup_line(self.speedup, written, chosen)
        return lines + ([""] + [speed] if speed else [])

    def _explain(self, verbose: bool = False) -> str:
        chosen, original = self.chosen, self._original
        lines = [
            f"udflow optimizer: {len(self.alternatives)} alternatives considered "
            f"({self.mode} {'enumeration' if self.mode in ('full', 'exact') else 'search'}, "
            f"properties={self.properties})",
            f"search: {self._search_summary()}",
            f"estimated cost: as written {original.cost:.4g} s, chosen {chosen.cost:.4g} s "
            f"({self._gain()}); the plan as written ranks #{original.rank}",
            "",
            f"Plan as written (rank #{original.rank}, estimated cost {original.cost:.4g} s):",
            self._tree(original.node),
            "",
            f"Chosen plan (rank #1, estimated cost {chosen.cost:.4g} s):",
            self._tree(chosen.node),
            "",
        ]
        barriers = self._barriers()
        if chosen.certificates:
            lines.append(f"Rewrites applied ({len(chosen.certificates)}):")
            for i, cert in enumerate(chosen.certificates, 1):
                lines.extend(self._rewrite(i, cert) if verbose else self._rewrite(i, cert)[:1])
        elif len(self.alternatives) > 1:
            lines.append(self._kept_as_written())
        elif barriers:
            lines.append("No rewrite applied: no operator may move (barriers below).")
        else:
            lines.append("No rewrite applied: the flow has no two operators to exchange.")
        if barriers:
            lines += ["", f"Barriers ({len(barriers)}): what kept operators where they are written"]
            lines += [f"  {line}" for line in barriers]
        lines += self._refused_lines()
        lines += _origin_lines(self.origin)
        lines += ["", "How the chosen plan runs on Spark (from the function models, docs/native.md):"]
        lines += [f"  {line}" for line in chosen.flow.physical().lines()]
        if not verbose:
            return "\n".join(lines + ["", "explain(verbose=True): the facts, Z3 queries and source lines behind "
                                           "each rewrite, the estimated costs, and what each function computes"])
        lines += ["", self._cost_breakdown(original, chosen)]
        models = _model_lines(chosen.node)
        if models:
            lines += ["", "What the modelled functions compute:"] + [f"  {line}" for line in models]
        return "\n".join(lines)

    def _refused_lines(self) -> list[str]:
        """The plans the rules allowed and the field-flow check refused (`udflow.fieldflow`)."""
        refused = self.alternatives.refused
        if not refused:
            return []
        problems = dict.fromkeys(str(p) for _, verdict in refused for p in verdict.problems)
        lines = ["", f"Refused by the field-flow check ({len(refused)} plan(s) the rules allowed; "
                     "docs/rules.md, \"Field flow\"):"]
        lines += [f"  {p}" for p in list(problems)[:5]]
        if len(problems) > 5:
            lines.append(f"  ... and {len(problems) - 5} more")
        return lines

    def _gain(self) -> str:
        """The chosen plan's estimated gain, never rounded to look like one that is not there."""
        if self.chosen.node is self._original.node:
            return "the plan as written is kept"
        saved = 1 - self.chosen.cost / self._original.cost if self._original.cost else 0.0
        if self.speedup >= 1.01:
            return f"{self.speedup:.2f}x cheaper"
        return f"{100 * saved:.2g}% cheaper"

    def _kept_as_written(self) -> str:
        """Why no rewrite: the plan as written is the cheapest, or ties with the cheapest."""
        tied = sum(1 for a in self.alternatives if a.rank == 1) - 1
        plans = f"{len(self.alternatives)} valid plans"
        if not tied:
            return f"No rewrite applied: the plan as written is the cheapest of {plans}."
        return (f"No rewrite applied: no plan of {plans} is estimated cheaper than the plan as written; "
                f"{tied} tie with it (costs within the model's resolution, "
                f"{self.alternatives.resolution:g} relative), and a tie keeps the plan as written.")

    def _search_summary(self) -> str:
        alts = self.alternatives
        counted = f"{alts.count:,} valid plans" if alts.count is not None else "plans not counted"
        if alts.mode == "pruned" and alts.count is not None:
            counted = f"{alts.count:,} plans in the explored memo"
        budget = "" if alts.complete else " [INCOMPLETE: best plan found within the budget]"
        return f"{alts.reason or alts.mode}; {counted}, {len(alts)} kept{budget}"

    def _barriers(self) -> list[str]:
        """Why operators of the plan as written cannot move: each function the analysis could
        not see into (no source: stdin, a REPL, `exec`) or found impure, with the reasons its
        evidence gives, then each operator and input that may not be exchanged, with the
        conditions the rules found violated. A courtesy of explain: never fails it."""
        out = []
        for node in self._original.node.walk():
            out.extend(self._function_barrier(node))
        for node in self._original.node.walk():
            for child in node.inputs:
                if child.inputs and node.inputs:  # two operators: a candidate exchange
                    out.extend(self._pair_barrier(node, child))
        return out

    def _function_barrier(self, node: Node) -> list[str]:
        if getattr(node, "fn", None) is None:
            return []
        try:
            props = properties_of(node, manual=self.properties == "manual")
        except Exception as exc:  # noqa: BLE001 - the analysis failed: that is the reason
            return [f"{node.label}: not analysed ({type(exc).__name__}: {exc})"]
        if props.pure:
            return []
        why = [e.note + (f", line {e.line}" if e.line else "") for e in props.evidence if e.prop == "impure"]
        what = {"opaque": "has no source to analyse",
                "internal": "was not analysed (an internal error of udflow's, please report it)"}.get(
                    props.origin, "is impure")
        why_text = "; ".join(dict.fromkeys(w for w in why if w)) or "the analysis cannot prove it harmless"
        return [f"{node.label}: {props.location or node.label} {what} ({why_text}), "
                "so no operator moves across it"]

    def _pair_barrier(self, upper: Node, lower: Node) -> list[str]:
        try:
            verdict = self.why_not(upper.label, lower.label)
        except Exception:  # noqa: BLE001 - no verdict, nothing to say
            return []
        if verdict.allowed:
            return []
        reasons = "; ".join(dict.fromkeys(str(r) for r in verdict.reasons)) or "no rule applies"
        return [f"{upper.label} stays above {lower.label}: {reasons}"]

    def _tree(self, root: Node) -> str:
        written = {n.label: n for n in self._original.node.walk()}

        def note(n: Node) -> str:
            est = self.model.estimate(n)
            text = f"~{_count(est.rows)} rows"
            key = getattr(n, "key", None)
            if key is not None and getattr(written.get(n.label), "key", key) != key:
                text = f"key rewritten to {','.join(key)}, " + text
            if isinstance(n, (Match, Cross)) and est.strategy:
                text += f", {est.strategy}" + ("" if est.hinted else " (Spark's choice: no hint)")
            return f"[{text}]"

        return _indent(draw(root, annotate=note), "  ")

    def _rewrite(self, i: int, cert) -> list[str]:
        operators = tuple(getattr(cert, "operators", ()))
        out = [f"  {i}. {cert.rule}: {' <-> '.join(operators)}"]
        facts = tuple(getattr(cert, "facts", ()))
        # the facts that carry the argument first (fields, keys, emit bounds), then the rest
        telling = [f for f in facts if not f.startswith(("kind(", "pure(", "copies(", "contains("))]
        for fact in telling[:MAX_FACTS]:
            out.append(f"       fact  {fact}")
        if len(facts) > min(len(telling), MAX_FACTS):
            out.append(f"       (+{len(facts) - min(len(telling), MAX_FACTS)} more facts in the certificate)")
        for query, answer in getattr(cert, "smt", ()):
            comments = [ln.strip("; ").strip() for ln in query.splitlines()
                        if ln.strip().startswith(";") and "generated from" not in ln]
            what = comments[0][:70] if comments else f"{len(query.splitlines())} lines of SMT-LIB"
            out.append(f"       z3    {answer}: {what}")
        out.extend(f"       {line}" for line in self._evidence(operators, getattr(cert, "facts", ())))
        return out

    def _evidence(self, operators, facts) -> list[str]:
        """Source lines behind the fields the certificate's facts name, per operator involved."""
        fields = set()
        for fact in facts:
            fields.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", fact))
        out = []
        for label in operators:
            node = self._node(label)
            if node is None or getattr(node, "fn", None) is None:
                continue
            try:
                props = properties_of(node, manual=self.properties == "manual")
            except Exception:  # evidence is a courtesy of explain; never fail on it
                continue
            shown = [str(e) for e in props.evidence if e.field is None or e.field in fields][:6]
            if shown:
                out.append(f"source {label}: {props.location}")
                out.extend(f"         {line}" for line in shown)
        return out

    def _node(self, label: str) -> Optional[Node]:
        for n in self._original.node.walk():
            if n.label == label:
                return n
        return None

    def _cost_breakdown(self, original: Alternative, chosen: Alternative) -> str:
        rows = [("", "as written", "chosen")]
        for name, get in (
            ("estimated cost (s)", lambda e: f"{e.cost:.4g}"),
            ("Python calls", lambda e: _count(e.python_calls)),
            ("bytes shuffled", lambda e: _count(e.shuffled)),
            ("bytes broadcast", lambda e: _count(e.broadcast)),
            ("output rows", lambda e: _count(e.rows)),
        ):
            rows.append((name, get(self.model.estimate(original.node)), get(self.model.estimate(chosen.node))))
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        table = ["  ".join(c.rjust(w) if j else c.ljust(w) for j, (c, w) in enumerate(zip(r, widths))) for r in rows]
        timing = ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in self.timings.items())
        return "Estimates:\n" + _indent("\n".join(table), "  ") + f"\nOptimizer time: {timing}"

    # -- pictures ----------------------------------------------------------------

    def to_networkx(self) -> nx.DiGraph:
        """Both plans in one graph: nodes `original/<label>` and `chosen/<label>`, edges input -> consumer."""
        graph = nx.DiGraph()
        for prefix, alt in (("original", self._original), ("chosen", self.chosen)):
            for n in alt.node.walk():
                est = self.model.estimate(n)
                graph.add_node(
                    f"{prefix}/{n.label}", plan=prefix, label=n.describe(), rows=est.rows,
                    kind=n.kind, strategy=est.strategy or "",
                )
                for child in n.inputs:
                    graph.add_edge(f"{prefix}/{child.label}", f"{prefix}/{n.label}")
        return graph

    def to_dot(self) -> str:
        """Graphviz DOT: the plan as written and the chosen plan side by side, data flowing up."""
        graph = self.to_networkx()
        out = ["digraph udflow {", "  rankdir=BT;", '  node [shape=box, fontname="Helvetica"];']
        titles = {
            "original": f"as written (est. {self._original.cost:.3g} s)",
            "chosen": f"chosen (est. {self.chosen.cost:.3g} s)",
        }
        for i, plan in enumerate(("original", "chosen")):
            out.append(f"  subgraph cluster_{i} {{")
            out.append(f"    label={_dot_string(titles[plan])};")
            for name, data in graph.nodes(data=True):
                if data["plan"] != plan:
                    continue
                text = f"{data['label']}\\n~{_count(data['rows'])} rows"
                if data["strategy"]:
                    text += f"\\n{data['strategy']}"
                shape = ", shape=cylinder" if data["kind"] == "source" else ""
                out.append(f"    {_dot_string(name)} [label={_dot_string(text, raw=True)}{shape}];")
            out.append("  }")
        for a, b in graph.edges():
            out.append(f"  {_dot_string(a)} -> {_dot_string(b)};")
        out.append("}")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        def block(title: str, alt: Alternative) -> str:
            return (
                f"<div style='flex:1'><b>{html.escape(title)}</b> (est. {alt.cost:.4g} s)"
                f"<pre>{html.escape(self._tree(alt.node))}</pre></div>"
            )

        rewrites = "".join(
            f"<li><code>{html.escape(c.rule)}</code>: {html.escape(' <-> '.join(c.operators))}</li>"
            for c in self.certificates
        ) or "<li>none: " + html.escape(
            "no plan is estimated cheaper than the plan as written" if len(self.alternatives) > 1
            else "no operator may move"
        ) + "</li>"
        return (
            f"<div><p>{len(self.alternatives)} alternatives ({self.mode}); "
            f"estimated: {html.escape(self._gain())}</p>"
            f"<div style='display:flex;gap:2em'>{block('As written', self._original)}"
            f"{block('Chosen', self.chosen)}</div><p>Rewrites:</p><ol>{rewrites}</ol></div>"
        )

    def __repr__(self) -> str:
        return f"<Optimized: {len(self.alternatives)} alternatives ({self.mode}), estimated: {self._gain()}>"


def _model_lines(root: Node) -> list[str]:
    """Each modelled function's model (what it computes, `docs/native.md`), indented under its
    operator's label."""
    out = []
    for node in root.walk():
        if getattr(node, "fn", None) is None:
            continue
        try:
            model = properties_of(node).model
        except Exception:  # noqa: BLE001 - not analysed: no model to show
            continue
        if model is not None:
            out.append(f"{node.label}:")
            out += [f"  {line}" for line in str(model).splitlines()]
    return out


def _label(x: Any) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, Node):
        return x.label
    raise TypeError(f"why_not takes operator labels or plan nodes, got {type(x).__name__}")


def _count(x: float) -> str:
    if x >= 1e9:
        return f"{x / 1e9:.3g}G"
    if x >= 1e6:
        return f"{x / 1e6:.3g}M"
    if x >= 1e4:
        return f"{x / 1e3:.3g}k"
    return f"{x:.3g}" if x < 10 else f"{x:.0f}"


def _indent(text: str, pad: str) -> str:
    return "\n".join(pad + line for line in text.splitlines())


def _dot_string(text: str, raw: bool = False) -> str:
    escaped = text.replace("\\", "\\\\") if not raw else text
    return '"' + escaped.replace('"', '\\"') + '"'


def _origin_lines(origin: tuple) -> list[str]:
    """`uf.from_spark`'s account: the Python UDFs opened, the parts of the DataFrame kept as written."""
    if not origin:
        return []
    kept, udfs = origin
    lines = ["", f"From PySpark: {len(udfs)} Python UDF(s) opened as flow operators"
                 + (f", {len(kept)} part(s) kept as written:" if kept else "; every part opened")]
    return lines + [f"  {part}" for part in kept]
