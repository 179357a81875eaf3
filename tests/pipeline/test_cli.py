"""The command line: build (generate, compile, simulate, check) and show."""
import re
import subprocess
import sys

import pytest


def run(*args, cwd=None):
    out = subprocess.run([sys.executable, "-m", "codegen", *args], capture_output=True,
                         text=True, timeout=600, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return out.stdout


def drift(text):
    return float(re.search(r"relative drift ([0-9.e+-]+)", text).group(1))


def test_build_builtin_examples(tmp_path):
    for name in ("dumbbell", "pendulum:2", "chaplygin_sleigh"):
        text = run("build", name, "--out", str(tmp_path), "--seconds", "0.5")
        assert "operations" in text and "us per call" in text
        assert drift(text) < 1e-6, text


def test_build_stiff_and_constrained_examples(tmp_path):
    """A stiff model gets the BDF method (RK4 or DOPRI5 at the default step
    would blow up or crawl), a model with loops starts on its constraints."""
    text = run("build", "stiff_pendulum:3", "--out", str(tmp_path), "--seconds", "0.5")
    assert "bdf in C" in text and "the model has dampers" in text
    text = run("build", "four_bar", "--out", str(tmp_path), "--seconds", "0.5")
    assert "dopri5 in C" in text and drift(text) < 1e-6, text


def test_failed_demonstration_run_is_a_message(tmp_path):
    out = subprocess.run([sys.executable, "-m", "codegen", "build", "spring_damper", "--out",
                          str(tmp_path), "--method", "rk4"], capture_output=True, text=True)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "the simulation stopped" in out.stderr and "try --method bdf" in out.stderr


def test_build_from_a_file(tmp_path):
    f = tmp_path / "mymodel.py"
    f.write_text("from codegen import examples\n\ndef model():\n    return examples.offset_pendulum()\n")
    text = run("build", str(f), "--out", str(tmp_path / "out"), "--seconds", "0.5")
    assert str(tmp_path / "out" / "offset_pendulum") in text
    assert drift(text) < 1e-8


def test_unknown_example_is_refused():
    out = subprocess.run([sys.executable, "-m", "codegen", "build", "no_such_model"],
                         capture_output=True, text=True)
    assert out.returncode != 0 and "unknown example 'no_such_model'" in out.stderr


@pytest.mark.parametrize("spec,message", [
    ("pendulum:x", "the size after ':' must be a positive integer"),
    ("pendulum:0", "the size after ':' must be a positive integer"),
    ("four_bar:3", "example 'four_bar' has no size"),
])
def test_bad_example_size_is_refused(spec, message):
    out = subprocess.run([sys.executable, "-m", "codegen", "show", spec],
                         capture_output=True, text=True)
    assert out.returncode != 0 and message in out.stderr and "Traceback" not in out.stderr


def test_show_prints_equations():
    text = run("show", "dumbbell")
    assert "Gibbs-Appell function" in text and "M u' = F" in text


def test_build_reports_each_stage_as_it_ends(tmp_path):
    """One line per stage with its time, in order, the simulation included."""
    proc = subprocess.Popen([sys.executable, "-m", "codegen", "build", "pendulum:2", "--out",
                             str(tmp_path), "--seconds", "0.5"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()            # printed before the rest of the work is done
    rest, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    lines = [first] + rest.splitlines()
    stages = [line.split()[0] for line in lines if re.match(r"^\w+ +[0-9.]+ s$", line.strip())]
    assert stages == ["forming", "CSE", "emitting", "compiling", "simulating"], lines
    assert first.startswith("forming")


@pytest.mark.parametrize("args,message", [
    (["build", "pendulum", "--seconds", "0"], "must be a positive, finite number of seconds"),
    (["build", "pendulum", "--seconds", "-1"], "must be a positive, finite number of seconds"),
    (["build", "pendulum", "--seconds", "nan"], "must be a positive, finite number of seconds"),
    (["build", "pendulum", "--seconds", "inf"], "must be a positive, finite number of seconds"),
    (["build", "missing.py"], "missing.py: no such file"),
])
def test_bad_arguments_are_refused_before_any_work(args, message, tmp_path):
    out = subprocess.run([sys.executable, "-m", "codegen", *args, "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and message in out.stderr and "Traceback" not in out.stderr
    assert not any(tmp_path.iterdir())            # nothing was built


def test_rk4_reports_its_step_not_tolerances(tmp_path):
    text = run("build", "pendulum:1", "--out", str(tmp_path), "--seconds", "0.5",
               "--method", "rk4")
    assert "rk4 in C, dt = 1 ms" in text and "rtol" not in text


def test_build_writes_an_animation_page(tmp_path):
    page = tmp_path / "disk.html"
    text = run("build", "rolling_disk", "--out", str(tmp_path), "--seconds", "0.5",
               "--animate", str(page))
    assert f"animation    {page}" in text and "31 frames" in text
    assert page.stat().st_size > 600_000 and b"three.js" in page.read_bytes()[:1000]


def test_animate_command_and_a_page_that_cannot_be_written(tmp_path):
    page = tmp_path / "pendulum.html"
    text = run("animate", "pendulum:2", "--seconds", "0.5", "--fps", "30", "--out", str(page),
               "--build-dir", str(tmp_path))
    assert "16 frames" in text and page.is_file()
    out = subprocess.run([sys.executable, "-m", "codegen", "animate", "pendulum:2", "--out",
                          str(tmp_path / "missing" / "p.html")], capture_output=True, text=True)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "does not exist" in out.stderr and "forming" not in out.stdout   # refused first
