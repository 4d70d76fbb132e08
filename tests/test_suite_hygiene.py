"""The test suite does not change the machine (issue 15, item 8): no test installs a system
package; a browser comes from the project's documented set-up step (`make browser`)."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
INSTALLERS = {"apt-get", "apt", "dnf", "yum", "brew", "snap", "apk", "zypper", "pacman"}


def _installs(node: ast.AST) -> bool:
    """A list or tuple literal like ["apt-get", "install", ...], or a string "apt-get install ..."."""
    if isinstance(node, (ast.List, ast.Tuple)):
        words = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return bool(words) and words[0].rsplit("/", 1)[-1] in INSTALLERS and "install" in words
    return False


def _commands(tree: ast.AST):
    """Arguments of calls that run programs: subprocess.*, os.system, os.popen."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name.startswith("subprocess.") or name in ("os.system", "os.popen", "run", "check_call"):
                yield from node.args


def test_no_test_runs_a_system_package_installer():
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for arg in _commands(tree):
            text = ast.unparse(arg)
            if _installs(arg) or any(f"{tool} install" in text for tool in INSTALLERS):
                offenders.append(f"{path.relative_to(ROOT)}:{arg.lineno}: {text[:80]}")
        for node in ast.walk(tree):  # a command list built first and run later
            if _installs(node):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert not sorted(set(offenders)), "tests must not install system packages:\n" + "\n".join(sorted(set(offenders)))


def test_the_browser_comes_from_the_documented_set_up_step():
    makefile = (ROOT / "Makefile").read_text()
    assert "\nbrowser:" in makefile
    test_rule = next(line for line in makefile.splitlines() if line.startswith("test:"))
    assert "browser" in test_rule  # `make test` (what CI runs) sets the browser up first
    assert "make browser" in (ROOT / "README.md").read_text()


def test_no_document_shows_a_machines_absolute_paths():
    """Sample output in the README and docs/ is as a reader would see it from the project's
    folder (issue 31, item 6): no checkout's absolute path."""
    import re

    pattern = re.compile(r"(?<![\w.])/(work|root|home|Users)/[\w.-]+/")
    offenders = []
    for path in [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not offenders, "\n".join(offenders)
