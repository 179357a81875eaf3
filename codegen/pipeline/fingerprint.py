"""A digest of a value of the formed model (its neutral equations, their signals and tree):
the cache's key is taken on it, before the common-subexpression elimination and the
emission that a cache hit saves.

Equal values give the same digest in every process: expressions are hashed by their
structure, bottom up (a shared subexpression is hashed once, and sharing does not change
the digest), symbols by their names and assumptions, and SymPy's ``Dummy`` symbols,
whose indices count the dummies a process has made, by the order in which the value
meets them and the order in which they were made. Any other difference, a number, a
name, an order of a list, a field of a dataclass, changes it. A value of a type it does
not know is an error, never left out.
"""
from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
import sympy as sm
from sympy.core.function import AppliedUndef

__all__ = ["fingerprint"]


def _h(*parts: bytes) -> bytes:
    """The digest of parts (each part's length is hashed too, so no two splits collide)."""
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(len(part).to_bytes(8, "little") + part)
    return h.digest()


def _assumptions(facts) -> bytes:
    return repr(sorted(dict(facts).items())).encode()


def _head(cls) -> bytes:
    return f"{cls.__module__}.{cls.__qualname__}".encode()


class _Digests:
    """The digests of one value: expressions memoized by identity (the memo keeps each
    object alive, so an identity is never reused), dummies numbered by equality."""

    def __init__(self):
        self.memo = {}
        self.dummies = {}          # Dummy -> the order in which the value meets it

    def _leaf(self, e) -> bytes:
        if isinstance(e, sm.Dummy):
            ordinal = self.dummies.setdefault(e, len(self.dummies))
            return _h(b"dummy", _head(type(e)), e.name.encode(), _assumptions(e.assumptions0),
                      str(ordinal).encode())
        if isinstance(e, sm.Symbol):
            return _h(b"symbol", _head(type(e)), e.name.encode(), _assumptions(e.assumptions0))
        return _h(b"atom", sm.srepr(e).encode())

    def _node(self, e, args: list) -> bytes:
        if isinstance(e, AppliedUndef):
            head = _h(b"function", e.func.__name__.encode(),
                      _assumptions(e.func.default_assumptions))
        else:
            head = _head(type(e))
        return _h(b"node", head, *args)

    def expression(self, root) -> bytes:
        """Bottom up without recursion: SymPy's trees can be deeper than Python's stack."""
        memo, stack = self.memo, [root]
        while stack:
            e = stack[-1]
            if id(e) in memo:
                stack.pop()
                continue
            args = e.args
            pending = [a for a in args if id(a) not in memo]
            if pending:
                stack.extend(reversed(pending))
                continue
            stack.pop()
            memo[id(e)] = (self._node(e, [memo[id(a)][0] for a in args]) if args
                           else self._leaf(e), e)
        return memo[id(root)][0]

    def value(self, v) -> bytes:
        if isinstance(v, sm.Basic):
            return _h(b"expr", self.expression(v))
        if isinstance(v, sm.MatrixBase):
            return _h(b"matrix", repr(v.shape).encode(), *[self.expression(e) for e in v])
        if v is None or isinstance(v, (bool, int, float, complex, str, np.generic)):
            return _h(b"plain", type(v).__name__.encode(), repr(v).encode())
        if isinstance(v, np.ndarray):
            items = [self.value(x) for x in v.ravel()] if v.dtype == object else [v.tobytes()]
            return _h(b"array", str(v.dtype).encode(), repr(v.shape).encode(), *items)
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return _h(b"dataclass", _head(type(v)),
                      *[_h(f.name.encode(), self.value(getattr(v, f.name)))
                        for f in dataclasses.fields(v)])
        if isinstance(v, (list, tuple)):
            return _h(_head(type(v)), *[self.value(x) for x in v])
        if isinstance(v, dict):
            return _h(b"dict", *[_h(self.value(k), self.value(x)) for k, x in v.items()])
        if isinstance(v, (set, frozenset)):
            return _h(b"set", *sorted(self.value(x) for x in v))
        if hasattr(v, "_sympy_"):         # a matrix formed on first use (symbolic.LazyMatrix)
            return self.value(sm.sympify(v))
        raise TypeError(f"cannot fingerprint a {type(v).__name__}: the cache key would miss "
                        f"what it holds")

    def creation_order(self) -> bytes:
        """The dummies' indices as ranks, in the order they were met: two values that
        differ only in which dummy was made first still differ."""
        met = list(self.dummies)
        rank = {d: k for k, d in enumerate(sorted(met, key=lambda d: d.dummy_index))}
        return repr([rank[d] for d in met]).encode()


def fingerprint(value) -> str:
    """The hex digest of value (see the module docstring)."""
    digests = _Digests()
    top = digests.value(value)
    return _h(b"fingerprint", top, digests.creation_order()).hex()
