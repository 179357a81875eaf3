"""The project's promises about itself: every Python block of the documentation runs as a
newcomer runs it and prints what its comments say, CI runs the README's command, and the
package installs under its own distribution name."""
import ast
import importlib.metadata
import io
import json
import os
import pathlib
import re
import subprocess
import sys
import tokenize

import pytest

import codegen

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
PYPROJECT = (ROOT / "pyproject.toml").read_text()
#: the distribution's name on PyPI (the import package stays codegen)
DISTRIBUTION = "gibbs-appell-codegen"


def test_ci_runs_the_readme_test_command():
    blocks = re.findall(r"```\n(.*?)\n```", README, re.S)
    test_cmd = next(b for b in blocks if "pytest" in b)
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_cmd.strip() in [line.strip() for line in ci]


# -- the documentation, block by block, as scripts --------------------------------------------
#: what a block may import beyond the base install, and the extra that brings it
EXTRAS = {"scipy": "test", "pinocchio": "bench", "dask": "distributed",
          "distributed": "distributed", "matplotlib": "plot", "fmpy": "test", "mujoco": "bench",
          "casadi": "casadi"}


def _blocks() -> list:
    """(page, line, code) of every Python block of the README and docs/, in order."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text()
        for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            found.append((page.relative_to(ROOT).as_posix(), text.count("\n", 0, m.start()) + 2,
                          m.group(1)))
    return found


BLOCKS = _blocks()


def _claims(code: str) -> list:
    """(line, comment) of each print of a block, in order: the comment says what it
    prints. A print runs once (not in a loop or a function), so that line k of the
    output is the k-th print's."""
    comments = {tok.start[0]: tok.string.lstrip("#").strip()
                for tok in tokenize.generate_tokens(io.StringIO(code).readline)
                if tok.type == tokenize.COMMENT}
    claims = []

    def visit(node, repeated):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Call) and getattr(child.func, "id", None) == "print":
                assert not repeated, f"line {child.lineno}: a print in a loop or a function"
                claim = comments.get(child.end_lineno, comments.get(child.lineno))
                assert claim, f"line {child.lineno}: a print without a comment saying what " \
                              f"it prints"
                claims.append((child.lineno, claim))
            visit(child, repeated or isinstance(child, (ast.For, ast.While, ast.FunctionDef,
                                                        ast.Lambda, ast.comprehension)))
    visit(ast.parse(code), False)
    return claims


_NUMBER = r"(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
_TOKEN = re.compile(rf"(?P<skip>\.\.\.)|(?<![\w.])(?P<number>[-+]?{_NUMBER}(?:[-+]{_NUMBER}j|j)?)"
                    rf"(?![\w.])|(?P<word>[A-Za-z_]\w*)|(?P<other>\S)")


def _ulp(written: str) -> float:
    """One unit of the last digit a number is written to; 0 for an integer (exact)."""
    units = [0.0]
    for digits, decimals, exponent in re.findall(r"(\d*)(\.\d*)?(?:[eE]([-+]?\d+))?j?",
                                                 written.lstrip("+-")):
        if decimals or exponent:
            units.append(10.0 ** (int(exponent or 0) - max(len(decimals) - 1, 0)))
    return max(units)


def _tokens(text: str) -> list:
    """(kind, value, unit) of numbers, "..." and the words and signs between them."""
    return [("number", complex(m.group("number")), _ulp(m.group("number")))
            if m.lastgroup == "number" else (m.lastgroup, m.group(), None)
            for m in _TOKEN.finditer(text)]


def _agrees(printed: str, claim: str) -> bool:
    """The printed line is the claim: the same words and signs, the same numbers to the
    last digit the claim writes (one unit of it), "..." standing for anything."""
    have, want = _tokens(printed), _tokens(claim)

    def match(i, j):
        if j == len(want):
            return i == len(have)
        kind, value, ulp = want[j]
        if kind == "skip":
            return any(match(k, j + 1) for k in range(i, len(have) + 1))
        if i == len(have) or have[i][0] != kind:
            return False
        if kind == "number":
            ok = abs(have[i][1] - value) <= 1.0001 * ulp
        else:
            ok = have[i][1] == value
        return ok and match(i + 1, j + 1)
    return match(0, 0)


def test_the_claims_checker():
    assert _agrees("True 10.0 (10, 10)", "True 10.0 (10, 10)")
    assert _agrees("0.359181123928879 0.3593534256620351", "0.35918 0.3594")
    assert not _agrees("0.359181123928879", "0.3594") and not _agrees("10.0", "11.0")
    assert _agrees("[(-14.078389+0j), (-0.7753419-4.4648677j)]",
                   "[(-14.0784+0j), (-0.7753-4.4649j)]")
    assert not _agrees("[(-0.7753-4.4649j)]", "[(-0.7753+4.4649j)]")
    assert _agrees("Matrix([[2*m, 0], [0, l**2*m]])", "Matrix([[2*m, 0], [0, l**2*m]])")
    assert not _agrees("Matrix([[2*m, 0, 0]])", "Matrix([[2*m, 0]])")
    assert not _agrees("3334", "3335") and _agrees("[1.  0.5 ]", "[1.0 0.5]")
    assert _agrees("2.5e-07", "2.5e-7") and not _agrees("2.7e-07", "2.5e-7")
    assert _agrees("/tmp/x/generated/disk.fmu", ".../generated/disk.fmu")
    assert _claims("x = 1\nprint(x)  # 1\nif x:\n    print(2)  # 2\n") == [(2, "1"), (4, "2")]
    with pytest.raises(AssertionError, match="without a comment"):
        _claims("print(1)\n")
    with pytest.raises(AssertionError, match="in a loop"):
        _claims("for k in range(2):\n    print(k)  # 0\n")


def test_every_page_has_its_blocks():
    pages = [page for page, _, _ in BLOCKS]
    assert pages.count("README.md") >= 2 and pages.count("docs/guide.md") >= 14


@pytest.mark.parametrize("page, line, code", BLOCKS, ids=[f"{p}:{n}" for p, n, _ in BLOCKS])
def test_documentation_block_runs_as_a_script(tmp_path, page, line, code):
    """The block, as written, is a script run by a new interpreter from an empty folder
    (its generated/ and any file it writes land there); it succeeds, each print prints
    what its comment says, and an import beyond the base install is named, with its
    extra, in the block."""
    where = f"{page}, the block at line {line}"
    (tmp_path / "example.py").write_text(code)
    env = dict(os.environ, CODEGEN_CACHE=str(tmp_path / "cache"), MPLBACKEND="Agg")
    run = subprocess.run([sys.executable, "-X", "importtime", "example.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600, env=env)
    timings = [ln for ln in run.stderr.splitlines() if ln.startswith("import time:")]
    errors = "\n".join(ln for ln in run.stderr.splitlines() if not ln.startswith("import time:"))
    assert run.returncode == 0, f"{where} failed:\n{errors[-4000:]}"
    imported = {ln.rsplit("|", 1)[-1].strip().split(".")[0] for ln in timings}
    for module in sorted(imported & set(EXTRAS)):
        assert f'".[{EXTRAS[module]}]"' in code, \
            f"{where} imports {module}: say next to it that it needs the {EXTRAS[module]!r} extra"
    claims, printed = _claims(code), run.stdout.splitlines()
    assert claims, f"{where} prints nothing: a block prints what it shows"
    assert len(printed) == len(claims), f"{where}: {len(claims)} prints, output:\n{run.stdout}"
    for (lineno, claim), out in zip(claims, printed):
        assert _agrees(out, claim), f"{where}, line {line + lineno - 1}: prints {out!r}, " \
                                    f"its comment says {claim!r}"


def test_readme_is_short_and_its_links_resolve():
    assert len(README.splitlines()) <= 250
    links = re.findall(r"\]\(((?:docs|codegen)/[^)#]+)\)", README)
    assert {"docs/guide.md", "docs/c-api.md", "docs/design.md", "docs/performance.md"} <= set(links)
    for link in links:
        assert (ROOT / link).exists(), link
    for page in (ROOT / "docs").glob("*.md"):
        assert "session" not in page.read_text().lower(), page


def test_main_job_command_runs():
    blocks = re.findall(r"```\n(.*?)\n```", README, re.S)
    main = next(b for b in blocks if "python -m codegen" in b and "pytest" not in b)
    cmd = main.split("&&", 1)[1].split()      # the part after the install
    assert cmd[:3] == ["python", "-m", "codegen"]
    out = subprocess.run([sys.executable, *cmd[1:]], capture_output=True, text=True,
                         cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "Gibbs-Appell function" in out.stdout or "energy" in out.stdout


def test_the_package_installs_under_its_own_name():
    """pyproject.toml names the distribution gibbs-appell-codegen (PyPI's codegen is another
    project): the README's install, pip install -e ., installed it from this checkout, it
    alone provides the import package codegen, and no page tells anyone to install
    codegen by its import name."""
    assert re.search(rf'^name = "{DISTRIBUTION}"$', PYPROJECT, re.M)
    found = list(importlib.metadata.distributions(name=DISTRIBUTION))
    assert found and {d.version for d in found} == {codegen.__version__}
    urls = {json.loads(d.read_text("direct_url.json") or "{}").get("url") for d in found}
    assert ROOT.as_uri() in urls, urls
    assert set(importlib.metadata.packages_distributions()["codegen"]) == {DISTRIBUTION}
    assert pathlib.Path(codegen.__file__).resolve().parent == ROOT / "codegen"
    install = README[README.index("## Install"):README.index("## Quick start")]
    assert f"`{DISTRIBUTION}`" in install and "pip install -e ." in install
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text()
        assert not re.search(r"pip install ['\"]?codegen\b|['\"]codegen\[", text), page


def test_setup_installs_every_package():
    """setup.py finds the packages (find_packages): every folder of codegen/ that holds
    Python code is a package, with an __init__.py, so that a wheel does not silently
    leave it out."""
    from setuptools import find_packages
    listed = set(find_packages(str(ROOT), include=["codegen", "codegen.*"]))
    folders = {".".join(p.parent.relative_to(ROOT).parts)
               for p in (ROOT / "codegen").rglob("*.py") if "__pycache__" not in p.parts}
    assert folders <= listed, sorted(folders - listed)
    assert {"codegen.algorithms", "codegen.runtime", "codegen.emit"} <= listed


def test_every_test_folder_is_collected():
    """pytest does not descend into folders that match its norecursedirs (build, dist, ...):
    a test folder so named would pass by never running."""
    import fnmatch
    from _pytest.config import get_config
    config = get_config()
    config.parse([str(ROOT / "tests")])
    patterns = config.getini("norecursedirs")
    assert "build" in patterns
    folders = [p for p in (ROOT / "tests").rglob("*") if p.is_dir() and "__pycache__" not in p.parts]
    skipped = [str(p.relative_to(ROOT)) for p in folders
               if any(fnmatch.fnmatch(p.name, pattern) for pattern in patterns)]
    assert not skipped, skipped
