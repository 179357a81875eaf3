"""A part's windows into the scratch array: base pointers (cg_window) from which its most
accessed slots are one byte of displacement away."""
from __future__ import annotations

import re

__all__ = ["part_windows", "WINDOWS", "WINDOW", "WINDOW_MIN"]


#: base pointers a part may take into its scratch array (cg_window), each reaching the
#: WINDOW slots around it with a one-byte displacement (x86-64's -128..127 bytes), where
#: a slot's address from w itself takes four beyond w[15]; taken where at least
#: WINDOW_MIN of the part's reads and writes fall. Shorter code runs faster, and each
#: further window gains less (Solo12's Jacobian: 3.44 µs a call without windows, 3.16
#: with eight)
WINDOWS, WINDOW, WINDOW_MIN = 8, 32, 8


_SLOT = re.compile(r"\bw\[(\d+)\]")


def part_windows(chunk: list) -> tuple:
    """(bases, statements): a part's windows into the scratch array, greedily the WINDOW
    consecutive slots of most accesses first, and its statements with those slots read
    and written through them (cg_w<j>[offset]; a slot through one pointer only)."""
    def texts(st):
        return [st["lhs"], st["rhs"]] + [t for g in st["sincos"] for t in g["args"] + g["targets"]]
    count = {}
    for st in chunk:
        for text in texts(st):
            for k in _SLOT.findall(text):
                count[int(k)] = count.get(int(k), 0) + 1
    bases, left = [], dict(count)
    while left and len(bases) < WINDOWS:
        slots = sorted(left)
        best, lo_best, j, inside = 0, None, 0, 0
        for lo in slots:                       # the window [lo, lo + WINDOW) of most accesses
            while j < len(slots) and slots[j] < lo + WINDOW:
                inside += left[slots[j]]
                j += 1
            if inside > best:
                best, lo_best = inside, lo
            inside -= left[lo]
        if best < WINDOW_MIN:
            break
        bases.append(lo_best + WINDOW // 2)
        for k in [k for k in left if lo_best <= k < lo_best + WINDOW]:
            del left[k]
    if not bases:
        return (), chunk

    def through(m):
        k = int(m.group(1))
        for b, base in enumerate(bases):
            if -WINDOW // 2 <= k - base < WINDOW // 2:
                return f"cg_w{b}[{k - base}]"
        return m.group(0)

    def rewritten(st):
        st = dict(st, lhs=_SLOT.sub(through, st["lhs"]), rhs=_SLOT.sub(through, st["rhs"]))
        st["sincos"] = [dict(g, args=[_SLOT.sub(through, a) for a in g["args"]],
                             targets=[_SLOT.sub(through, t) for t in g["targets"]])
                        for g in st["sincos"]]
        return st
    return bases, [rewritten(st) for st in chunk]
