"""The C contract read from templates/runtime/cg_model.h: its one definition.

ABI_VERSION, STATUS ({code: message}) and METHODS ({name: id}) come from the
header's CG_ABI_VERSION, CG_STATUS_LIST and CG_METHOD_LIST, so that Python,
the runtime and the FMU wrapper never hold copies of the numbers. Pure
Python: the formulation, the export and the command line use it without
loading the compiled runtime.
"""
from __future__ import annotations

import re

from .emit import RUNTIME_DIR

__all__ = ["ABI_VERSION", "STATUS", "METHODS", "STATUS_CODE"]


def _read():
    text = (RUNTIME_DIR / "cg_model.h").read_text()
    version = int(re.search(r"#define CG_ABI_VERSION (\d+)", text).group(1))

    def items(macro):
        body = re.search(rf"#define {macro}\(X\)(.*?)\n\n", text, re.S).group(1)
        return re.findall(r'X\((\w+), (\d+), "([^"]*)"\)', body)
    status = items("CG_STATUS_LIST")
    methods = items("CG_METHOD_LIST")
    return (version, {int(v): msg for _, v, msg in status},
            {sym: int(v) for sym, v, _ in status}, {name: int(v) for _, v, name in methods})


ABI_VERSION, STATUS, STATUS_CODE, METHODS = _read()
