"""Benchmarks that run this project and its peers side by side in one run."""
import subprocess
import sys
import timeit

#: child()'s reason for a run stopped at its cap
CAPPED = "capped"


def child(args, cap=None, env=None):
    """Run ``python -c *args`` in a fresh interpreter, stopped after cap seconds:
    (its stdout's last line, None), or (None, why not): CAPPED past the cap, else the
    last line of its stderr ("failed" if it wrote none)."""
    try:
        proc = subprocess.run([sys.executable, "-c", *args], capture_output=True, text=True,
                              timeout=cap, env=env)
    except subprocess.TimeoutExpired:
        return None, CAPPED
    if proc.returncode != 0:
        return None, (proc.stderr.strip().splitlines() or ["failed"])[-1]
    return proc.stdout.strip().splitlines()[-1], None


def median_time(f, number: int = 2000) -> float:
    """Median time per call of f over 7 repeats of `number` calls, after a warm-up call."""
    f()
    times = sorted(t / number for t in timeit.repeat(f, number=number, repeat=7))
    return times[len(times) // 2]


def alternating_times(fns: dict, number: int = 2000, rounds: int = 3) -> dict:
    """{name: time per call} of each function of fns: the least of its median_time over
    rounds, the functions measured in turn in each round, so that a slow spell of the
    machine does not fall on one of them alone."""
    best = {}
    for _ in range(rounds):
        for name, f in fns.items():
            t = median_time(f, number)
            best[name] = min(t, best.get(name, t))
    return best
