"""Benchmarks that run this project and its peers side by side in one run."""
import timeit


def median_time(f, number: int = 2000) -> float:
    """Median time per call of f over 7 repeats of `number` calls, after a warm-up call."""
    f()
    times = sorted(t / number for t in timeit.repeat(f, number=number, repeat=7))
    return times[len(times) // 2]
