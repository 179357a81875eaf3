"""The project's promises about itself: README examples run, CI runs the README's command."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
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


def test_main_job_command_runs():
    blocks = re.findall(r"```\n(.*?)\n```", README, re.S)
    main = next(b for b in blocks if "python -m codegen" in b and "pytest" not in b)
    cmd = main.split("&&", 1)[1].split()      # the part after the install
    assert cmd[:3] == ["python", "-m", "codegen"]
    out = subprocess.run([sys.executable, *cmd[1:]], capture_output=True, text=True,
                         cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "Gibbs-Appell function" in out.stdout or "energy" in out.stdout
