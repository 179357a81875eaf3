"""The project's promises about itself: README examples run, CI runs the README's command."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_ci_runs_the_readme_test_command():
    blocks = re.findall(r"```\n(.*?)\n```", README, re.S)
    test_cmd = next(b for b in blocks if "pytest" in b)
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_cmd.strip() in [line.strip() for line in ci]


def test_readme_python_examples_run():
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})


def test_documentation_python_examples_run():
    """Every Python block of docs/, each in a fresh namespace, in order."""
    pages = sorted((ROOT / "docs").glob("*.md"))
    ran = 0
    for page in pages:
        for code in re.findall(r"```python\n(.*?)```", page.read_text(), re.S):
            exec(compile(code, str(page.relative_to(ROOT)), "exec"), {})
            ran += 1
    assert ran >= 6


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
