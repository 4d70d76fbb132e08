"""Biomedical text mining (paper, section 7.2): gene-drug relations from abstracts.

A pipeline of six Maps over a corpus of abstracts, written in the order an NLP
engineer writes it, linguistic preprocessing first, extraction last:

    Map(find_relations)      gene and drug in one sentence, a verb between   filter
      Map(find_drugs)        drug dictionary, Aho-Corasick over the tokens   filter
        Map(find_genes)      gene dictionary, Aho-Corasick over the tokens   filter
          Map(pos_tag)       HMM part-of-speech tagger, Viterbi decoding     expensive
            Map(split_sentences)  sentence boundaries on the token stream
              Map(tokenize)  regular-expression tokenizer
                Source(abstracts)

Each extractor is also a filter: it forwards only the abstracts that mention
a gene (a drug, a relation), which is what makes the order matter. Which
orders are valid follows from the fields each function reads and writes:

    tokenize         reads text                                     writes tokens
    split_sentences  reads tokens                                   writes sentence_ends
    pos_tag          reads tokens                                   writes pos
    find_genes       reads tokens                                   writes genes
    find_drugs       reads tokens                                   writes drugs
    find_relations   reads tokens, sentence_ends, pos, genes, drugs writes relations

Annotation layers are stored the way corpus formats store them, as
space-separated strings (tokens never contain spaces): `tokens`, `pos` (one
tag per token), `sentence_ends` (token offsets), `genes` and `drugs`
(`start:end:id` mentions over token offsets) and `relations` (`gene|verb|drug`).

So tokenize comes first, find_relations last, and the four in between are free:
4! = 24 orders, the paper's count (Table 1). The cheapest runs the two
selective dictionary filters first and tags only the few abstracts left.

Every function carries its true read and write sets as a manual annotation
(`optimize(..., properties="manual")`); the analysis must find the same.

Costs and selectivities as the optimizer samples them (2,000 abstracts,
`Optimized.profiles`): `pos_tag` ~1.4 ms per abstract (Viterbi over every
token), every other step 10-25 us; `find_drugs` keeps ~20% of the abstracts,
`find_genes` ~34%, `find_relations` ~57% of what reaches it. The cheapest
plan tags ~7% of the abstracts, the plan as written all of them: ~10x
estimated. Measured on Spark the gap is smaller, and the reason is not the
functions but a fixed cost per Spark job (scheduling, Python workers,
Arrow batches; ~1.5-2.5 s on 2 cores) that every plan pays once and the cost
model, rightly for ranking, leaves out. Measured under load, 2 cores:

    scale 0.5 (5k abstracts):   best 2.3 s, as written 10.0 s  -> 4.5x (estimated 10.2x)
    scale 2   (20k abstracts):  best 5.1 s, worst     32.5 s  -> 6.4x (estimated 10.3x)
    minus ~2.5 s fixed per job: 2.6 s vs 30.0 s               -> 11.5x

so the ratio grows toward the estimate with the corpus (the paper's was
425 MB of PubMed; ours at scale 2 is 13.5 MB in memory, 4.1 MB of parquet).
The functions are left as they are: making them slower to widen the gap
would measure nothing.

Run it:  python -m examples.text_mining --data data/text-mining --scale 0.05
"""

from __future__ import annotations

import math
import os
import random
import re
from collections import deque
from functools import lru_cache
from typing import Iterable, Sequence

import udflow
from examples.paper_tasks import annotate, run_task, write_parquet

CORPUS = "abstracts.parquet"
DOCS_PER_SCALE = 10_000  # scale 1.0: ten thousand abstracts, about 12 MB of text

# ---------------------------------------------------------------------------
# Dictionaries: a fixed, seed-independent vocabulary of genes and drugs
# ---------------------------------------------------------------------------

GENE_WORDS = (
    "tumor necrosis factor growth receptor kinase protein binding alpha beta gamma "
    "interleukin transcription activator tyrosine phosphatase cyclin dependent insulin "
    "like heat shock mitogen activated serine threonine domain containing family member "
    "nuclear ligand channel subunit homolog"
).split()
DRUG_STEMS = (
    "aba beva ceti dasa erlo gefi imati lapa nilo pazo rito sora suni tofa vande ator "
    "simva rosu lisino enala capto meto propra ateno flucon itracon vorico azithro "
    "clarithro ery vanco acyclo oselta"
).split()
DRUG_SUFFIXES = ("mab", "nib", "statin", "pril", "olol", "azole", "mycin", "vir")
DRUG_SALTS = ("hydrochloride", "sodium", "mesylate", "citrate")


@lru_cache(maxsize=1)
def gene_vocabulary() -> tuple[tuple[str, str], ...]:
    """(gene id, surface form) pairs: a symbol like `KRT17` and a multi-word name per gene."""
    rng = random.Random(20120827)
    letters = "ABCDEFGHIKLMNPRSTVWXYZ"
    entries, symbols = [], set()
    while len(symbols) < 300:
        symbol = "".join(rng.choice(letters) for _ in range(rng.randint(2, 4))) + str(rng.randint(1, 29))
        if symbol in symbols:
            continue
        symbols.add(symbol)
        name = " ".join(rng.sample(GENE_WORDS, rng.randint(2, 4)))
        if rng.random() < 0.4:
            name += f" {rng.randint(1, 12)}"
        entries.append((symbol, symbol))
        entries.append((symbol, name))
    return tuple(entries)


@lru_cache(maxsize=1)
def drug_vocabulary() -> tuple[tuple[str, str], ...]:
    """(drug id, surface form) pairs: `gefinib`, and `gefinib mesylate` for some."""
    entries = []
    for i, stem in enumerate(DRUG_STEMS):
        for j, suffix in enumerate(DRUG_SUFFIXES):
            if (i + j) % 3:
                continue
            name = stem + suffix
            entries.append((name, name))
            if (i * 7 + j) % 4 == 0:
                entries.append((name, f"{name} {DRUG_SALTS[(i + j) % len(DRUG_SALTS)]}"))
    return tuple(entries)


# ---------------------------------------------------------------------------
# Aho-Corasick over token sequences
# ---------------------------------------------------------------------------


Automaton = tuple  # (goto, fail, out): plain lookup tables, see `build_automaton`


def build_automaton(patterns: Iterable[tuple[Sequence[str], str]]) -> Automaton:
    """Aho-Corasick automaton whose alphabet is (lower-cased) tokens.

    Finds every occurrence of every pattern in one left-to-right pass, however
    many patterns share prefixes: `goto` is the trie, `fail[s]` the state of
    the longest proper suffix of `s`'s path that is also a trie path, `out[s]`
    the patterns ending at `s` (its own and, through `fail`, its suffixes'),
    as (length, id) pairs. Plain tables, so the functions that read them stay
    transparent to udflow's analysis (reading a lookup table is harmless).
    """
    goto: list[dict[str, int]] = [{}]
    out: list[list[tuple[int, str]]] = [[]]
    for tokens, ident in patterns:
        state = 0
        for token in tokens:
            nxt = goto[state].get(token)
            if nxt is None:
                nxt = len(goto)
                goto[state][token] = nxt
                goto.append({})
                out.append([])
            state = nxt
        out[state].append((len(tokens), ident))
    fail = [0] * len(goto)
    queue = deque(goto[0].values())
    while queue:
        state = queue.popleft()
        for token, nxt in goto[state].items():
            queue.append(nxt)
            f = fail[state]
            while f and token not in goto[f]:
                f = fail[f]
            fail[nxt] = goto[f].get(token, 0)  # a shallower state: never nxt itself
            out[nxt] = out[nxt] + out[fail[nxt]]
    return (goto, fail, [tuple(o) for o in out])


def dictionary_matches(automaton: Automaton, tokens: Sequence[str]) -> list[tuple[int, int, str]]:
    """Every (start, end, id) occurrence of a dictionary entry in `tokens`, end exclusive."""
    goto, fail, out = automaton
    found = []
    state = 0
    for i, token in enumerate(tokens):
        token = token.lower()
        while state and token not in goto[state]:
            state = fail[state]
        state = goto[state].get(token, 0)
        for length, ident in out[state]:
            found.append((i + 1 - length, i + 1, ident))
    return found


def dictionary_mentions(automaton: Automaton, tokens: Sequence[str]) -> list[str]:
    """Leftmost-longest, non-overlapping matches as `start:end:id` strings."""
    chosen = []
    taken_until = 0
    for start, end, ident in sorted(dictionary_matches(automaton, tokens), key=lambda m: (m[0], -m[1])):
        if start >= taken_until:
            chosen.append(f"{start}:{end}:{ident}")
            taken_until = end
    return chosen


@lru_cache(maxsize=None)
def automaton(vocabulary: str) -> Automaton:
    entries = gene_vocabulary() if vocabulary == "genes" else drug_vocabulary()
    return build_automaton((tuple(tokenize_text(surface.lower())), ident) for ident, surface in entries)


def parse_mention(mention: str) -> tuple[int, int, str]:
    start, end, ident = mention.split(":", 2)
    return int(start), int(end), ident


# ---------------------------------------------------------------------------
# Tokenizer, sentence splitter, part-of-speech tagger
# ---------------------------------------------------------------------------

TOKEN_PATTERN = r"\d+(?:\.\d+)?|[A-Za-z0-9]+(?:[-'][A-Za-z0-9]+)*|[^\sA-Za-z0-9]"
SENTENCE_END = frozenset({".", "!", "?"})


def tokenize_text(text: str) -> list[str]:
    return re.findall(TOKEN_PATTERN, text)  # `re` caches the compiled pattern


def sentence_ends(tokens: Sequence[str]) -> list[int]:
    """Exclusive end index of each sentence: after a full stop, or at the end of the text."""
    ends = [i + 1 for i, t in enumerate(tokens) if t in SENTENCE_END]
    if tokens and (not ends or ends[-1] != len(tokens)):
        ends.append(len(tokens))
    return ends


TAGS = ("DT", "IN", "CC", "PRP", "NN", "NNS", "NNP", "JJ", "VB", "VBD", "VBZ", "VBN", "VBG", "RB", "CD", ".")
T = len(TAGS)
TAG_INDEX = {t: i for i, t in enumerate(TAGS)}

LEXICON = {
    **dict.fromkeys("the a an this these that those each".split(), "DT"),
    **dict.fromkeys("of in on with for by from to at as between after during than".split(), "IN"),
    **dict.fromkeys("and or but".split(), "CC"),
    **dict.fromkeys("it they we its their".split(), "PRP"),
    **dict.fromkeys("was were is are be been has have had".split(), "VBD"),
    **dict.fromkeys(
        "inhibits activates suppresses upregulates downregulates modulates targets binds "
        "enhances reverses".split(), "VBZ"),
    **dict.fromkeys("not also significantly markedly".split(), "RB"),
}

# Which tag tends to follow which: the HMM's transition model, as preferences.
FOLLOWS = {
    "DT": "JJ NN NNS NNP", "IN": "DT JJ NN NNS NNP CD", "CC": "DT JJ NN NNS NNP VBD VBZ",
    "PRP": "VBD VBZ VB", "NN": "IN VBD VBZ NN . CC", "NNS": "IN VBD VBZ . CC",
    "NNP": "VBD VBZ NN NNS IN . CC", "JJ": "NN NNS NNP JJ", "VB": "DT NN NNS IN JJ",
    "VBD": "VBN RB IN DT JJ VBG", "VBZ": "DT NN NNS NNP JJ IN", "VBN": "IN . DT CC",
    "VBG": "DT NN NNS", "RB": "VBN VBD VBZ JJ", "CD": "NN NNS IN . CD", ".": "DT NNP NN JJ PRP",
}
TRANSITION = tuple(
    tuple(-0.7 if TAGS[t] in FOLLOWS[TAGS[s]].split() else -4.0 for s in range(T))  # [to][from]
    for t in range(T)
)
START = tuple(-0.7 if t in ("DT", "NNP", "NN", "JJ", "PRP", "IN") else -4.0 for t in TAGS)


def emission(word: str) -> list[float]:
    """Log-scores of each tag emitting `word`: lexicon first, then shape and suffix features."""
    scores = [-9.0] * T
    lower = word.lower()
    if lower in LEXICON:
        scores[TAG_INDEX[LEXICON[lower]]] = 0.0
        return scores
    if word in SENTENCE_END or not word[0].isalnum():
        scores[TAG_INDEX["."]] = 0.0
        return scores
    if word.replace(".", "", 1).isdigit():
        scores[TAG_INDEX["CD"]] = 0.0
        return scores
    features = []
    if any(c.isdigit() for c in word) or (word.isupper() and len(word) > 1):
        features.append(("NNP", -0.2))
    if lower.endswith("ed"):
        features += [("VBD", -0.9), ("VBN", -0.6), ("JJ", -2.5)]
    if lower.endswith("ing"):
        features += [("VBG", -0.4), ("NN", -2.0)]
    if lower.endswith("ly"):
        features.append(("RB", -0.3))
    if lower.endswith(("al", "ive", "ous", "ic", "ary", "ant", "ent", "ble")):
        features.append(("JJ", -0.5))
    if lower.endswith("s") and not lower.endswith("ss"):
        features += [("NNS", -0.6), ("VBZ", -2.2)]
    if lower.endswith(("tion", "ment", "ness", "ity", "ase", "in", "or", "er")):
        features.append(("NN", -0.4))
    features += [("NN", -1.6), ("JJ", -2.8), ("VB", -3.5)]
    for tag, score in features:
        i = TAG_INDEX[tag]
        scores[i] = max(scores[i], score)
    return scores


def viterbi(words: Sequence[str]) -> list[str]:
    """The most likely tag sequence under the HMM: O(n * T^2), like any first-order tagger."""
    if not words:
        return []
    score = [START[t] + e for t, e in enumerate(emission(words[0]))]
    back = []
    for word in words[1:]:
        e = emission(word)
        new, pointers = [0.0] * T, [0] * T
        for t in range(T):
            into = TRANSITION[t]
            best, arg = -math.inf, 0
            for s in range(T):
                v = score[s] + into[s]
                if v > best:
                    best, arg = v, s
            new[t], pointers[t] = best + e[t], arg
        score = new
        back.append(pointers)
    state = 0
    for t in range(1, T):
        if score[t] > score[state]:
            state = t
    path = [state]
    for pointers in reversed(back):
        state = pointers[state]
        path.append(state)
    return [TAGS[s] for s in reversed(path)]


def relations_in(tokens: str, ends: str, pos: str, genes: str, drugs: str) -> list[str]:
    """`gene|verb|drug` for each gene and drug in one sentence with a verb between them.

    Takes the annotation layers as the flow stores them (space-separated strings).
    """
    found = []
    start = 0
    tokens, pos = tokens.split(), pos.split()
    gene_spans = [parse_mention(m) for m in genes.split()]
    drug_spans = [parse_mention(m) for m in drugs.split()]
    for end in map(int, ends.split()):
        in_sentence = lambda span: start <= span[0] and span[1] <= end  # noqa: E731
        for g0, g1, gene in filter(in_sentence, gene_spans):
            for d0, d1, drug in filter(in_sentence, drug_spans):
                lo, hi = (g1, d0) if g1 <= d0 else (d1, g0)
                verbs = [tokens[i].lower() for i in range(lo, hi) if pos[i].startswith("VB")]
                if verbs:
                    found.append(f"{gene}|{verbs[0]}|{drug}")
        start = end
    return sorted(set(found))


# ---------------------------------------------------------------------------
# The flow
# ---------------------------------------------------------------------------


def build_flow(data_dir: str) -> udflow.Flow:
    """The pipeline as written (see the module docstring) over `data_dir/abstracts.parquet`."""
    genes_automaton = automaton("genes")
    drugs_automaton = automaton("drugs")

    @annotate(reads=("text",), writes=("tokens",), emits=(1, 1), card_reads=(), copy=True)
    def tokenize(r):
        return {**r, "tokens": " ".join(tokenize_text(r["text"]))}

    @annotate(reads=("tokens",), writes=("sentence_ends",), emits=(1, 1), card_reads=(), copy=True)
    def split_sentences(r):
        return {**r, "sentence_ends": " ".join(map(str, sentence_ends(r["tokens"].split())))}

    @annotate(reads=("tokens",), writes=("pos",), emits=(1, 1), card_reads=(), copy=True)
    def pos_tag(r):
        return {**r, "pos": " ".join(viterbi(r["tokens"].split()))}

    @annotate(reads=("tokens",), writes=("genes",), emits=(0, 1), copy=True)
    def find_genes(r):
        genes = dictionary_mentions(genes_automaton, r["tokens"].split())
        if genes:
            yield {**r, "genes": " ".join(genes)}

    @annotate(reads=("tokens",), writes=("drugs",), emits=(0, 1), copy=True)
    def find_drugs(r):
        drugs = dictionary_mentions(drugs_automaton, r["tokens"].split())
        if drugs:
            yield {**r, "drugs": " ".join(drugs)}

    @annotate(
        reads=("tokens", "sentence_ends", "pos", "genes", "drugs"), writes=("relations",), emits=(0, 1), copy=True
    )
    def find_relations(r):
        relations = relations_in(r["tokens"], r["sentence_ends"], r["pos"], r["genes"], r["drugs"])
        if relations:
            yield {**r, "relations": " ".join(relations)}

    abstracts = udflow.source("abstracts", path=os.path.join(data_dir, CORPUS), key=["doc_id"])
    return (
        abstracts.map(tokenize)
        .map(split_sentences)
        .map(pos_tag)
        .map(find_genes)
        .map(find_drugs)
        .map(find_relations)
    )


# ---------------------------------------------------------------------------
# The corpus generator
# ---------------------------------------------------------------------------

NOUNS = ("patients cells samples mice tissues cohort analysis study expression levels response "
         "survival treatment trial model pathway outcomes biopsies lesions participants").split()
ADJECTIVES = ("significant clinical primary novel human chronic adverse molecular systemic "
              "elevated metastatic randomized baseline cellular").split()
PAST_VERBS = "observed measured reported evaluated assessed compared identified detected analysed".split()
RELATION_VERBS = "inhibits activates suppresses upregulates downregulates modulates targets binds enhances".split()
JOURNALS = ("J Biol Chem", "Cancer Res", "Nature Med", "PLoS One", "Clin Pharmacol Ther", "Mol Cell")


def _filler(rng: random.Random) -> str:
    templates = (
        "The {adj} {noun} was {verb} in {n} {nouns} with {adj2} {noun2}.",
        "{Nouns} were {verb} after {n} weeks of follow-up.",
        "We {verb} the {adj} {noun} of {n} {nouns} in a {adj2} {noun2}.",
        "These results were {verb} in {adj} {nouns} and {adj2} {noun2}.",
        "A total of {n} {nouns} were {verb} between {year} and {year2}.",
        "Median {noun} was {x} months in the {adj} {noun2}.",
    )
    noun, noun2, nouns = rng.choice(NOUNS), rng.choice(NOUNS), rng.choice(NOUNS)
    return rng.choice(templates).format(
        adj=rng.choice(ADJECTIVES), adj2=rng.choice(ADJECTIVES), noun=noun, noun2=noun2, nouns=nouns,
        Nouns=nouns.capitalize(), verb=rng.choice(PAST_VERBS), n=rng.randint(3, 900),
        year=rng.randint(1990, 2005), year2=rng.randint(2006, 2012), x=f"{rng.uniform(2, 60):.1f}",
    )


def _gene_sentence(rng, gene):
    return rng.choice((
        "Expression of {g} was {verb} in {adj} {nouns}.",
        "{g} mutations were {verb} in {n} of {m} {nouns}.",
        "Loss of {g} was associated with poor {noun}.",
    )).format(g=gene, verb=rng.choice(PAST_VERBS), adj=rng.choice(ADJECTIVES), nouns=rng.choice(NOUNS),
              n=rng.randint(2, 40), m=rng.randint(41, 300), noun=rng.choice(NOUNS))


def _drug_sentence(rng, drug):
    return rng.choice((
        "Patients received {d} at {n} mg daily.",
        "{D} was well tolerated in the {adj} {noun}.",
        "Treatment with {d} {verb} {adj} {noun}.",
    )).format(d=drug, D=drug[0].upper() + drug[1:], n=rng.choice((5, 10, 20, 40, 100, 250)),
              adj=rng.choice(ADJECTIVES), noun=rng.choice(NOUNS), verb=rng.choice(("improved", "prolonged")))


def _relation_sentence(rng, gene, drug):
    return rng.choice((
        "{D} {rel} {g} signaling in {adj} {nouns}.",
        "{g} {rel} the response to {d} in {nouns}.",
        "We found that {d} {rel} {g} in {adj} {nouns}.",
    )).format(g=gene, d=drug, D=drug[0].upper() + drug[1:], rel=rng.choice(RELATION_VERBS),
              adj=rng.choice(ADJECTIVES), nouns=rng.choice(NOUNS))


def _co_mention_sentence(rng, gene, drug):
    """Gene and drug in one sentence with no verb between them: not a relation."""
    return f"Both {gene} and {drug} were {rng.choice(PAST_VERBS)} in {rng.choice(NOUNS)}."


def _abstract(rng, genes, drugs, gene_rate, drug_rate, relation_rate) -> str:
    sentences = [_filler(rng) for _ in range(rng.randint(7, 12))]
    gene = rng.choice(genes) if rng.random() < gene_rate else None
    drug = rng.choice(drugs) if rng.random() < drug_rate else None
    extra = []
    if gene:
        extra.append(_gene_sentence(rng, gene))
    if drug:
        extra.append(_drug_sentence(rng, drug))
    if gene and drug:
        roll = rng.random()
        if roll < relation_rate:
            extra.append(_relation_sentence(rng, gene, drug))
        elif roll < relation_rate + (1 - relation_rate) / 2:
            extra.append(_co_mention_sentence(rng, gene, drug))
    for s in extra:
        sentences.insert(rng.randint(0, len(sentences)), s)
    return " ".join(sentences)


def generate_data(
    data_dir: str,
    scale: float,
    seed: int = 0,
    *,
    gene_rate: float = 0.35,
    drug_rate: float = 0.2,
    relation_rate: float = 0.6,
) -> str:
    """Write `data_dir/abstracts.parquet`: `DOCS_PER_SCALE * scale` synthetic abstracts.

    Each abstract is 7 to 12 filler sentences; with probability `gene_rate` it
    also mentions a gene (symbol or full name), with `drug_rate` a drug, and
    when it has both, with `relation_rate` a sentence stating a relation
    between them (else, half the time, a co-mention without a verb between).
    Deterministic: one seed, one file, byte for byte.
    """
    import pyarrow as pa

    rng = random.Random(seed)
    genes = [surface for _, surface in gene_vocabulary()]
    drugs = [surface for _, surface in drug_vocabulary()]
    n = max(1, round(DOCS_PER_SCALE * scale))
    columns = {"doc_id": [], "journal": [], "year": [], "text": []}
    for doc_id in range(n):
        columns["doc_id"].append(doc_id)
        columns["journal"].append(rng.choice(JOURNALS))
        columns["year"].append(rng.randint(1995, 2012))
        columns["text"].append(_abstract(rng, genes, drugs, gene_rate, drug_rate, relation_rate))
    schema = pa.schema([("doc_id", pa.int64()), ("journal", pa.string()), ("year", pa.int64()), ("text", pa.string())])
    write_parquet(os.path.join(data_dir, CORPUS), columns, schema)
    return data_dir


def _show(rows, seconds) -> None:
    print(f"{len(rows)} abstracts with a gene-drug relation ({seconds:.2f} s)")
    for r in sorted(rows, key=lambda r: r["doc_id"])[:10]:
        print(f"  {r['doc_id']:>6}  {r['relations'].replace(' ', ', ')}")


def main(argv=None) -> None:
    run_task("Gene-drug relation mining (paper, section 7.2) via udflow", "data/text-mining",
             generate_data, build_flow, _show, argv)


if __name__ == "__main__":
    main()
