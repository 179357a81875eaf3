"""The Jinja2 environment of templates/ and what is rendered from it apart from a model: the
runtime's files for exports and the Cython declarations of the C contract."""
from __future__ import annotations

import keyword
from functools import lru_cache

from ..abi import (CALLBACKS, CONSTANTS, DESCRIPTOR, FLAGS, FUNCTIONS, METHOD_INFO, PROPERTIES,
                   RUNTIME, RUNTIME_DIR, STATUS_CODE, TEMPLATE_DIR)

__all__ = ["render", "environment", "runtime_sources", "cython_contract", "RUNTIME_C",
           "TEMPLATE_DIR", "RUNTIME_DIR"]


def runtime_sources() -> dict:
    """The runtime's files (name -> text), for a standalone export or an FMU."""
    return {p.name: p.read_text() for p in sorted(RUNTIME_DIR.iterdir())
            if p.suffix in (".c", ".h")}


#: the runtime's translation units (cg_fused.c is included by a fused model instead)
RUNTIME_C = tuple(sorted(p.name for p in RUNTIME_DIR.glob("cg_*.c") if p.name != "cg_fused.c"))


def _comment(text) -> str:
    """text safe inside a C comment."""
    return str(text).replace("*/", "* /").replace("/*", "/ *")


@lru_cache(maxsize=None)
def environment(*extra_dirs):
    """The Jinja2 environment of templates/ (and extra_dirs, searched first):
    StrictUndefined, and the filter ``comment`` (text safe inside /* */)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined
    env = Environment(loader=FileSystemLoader([str(d) for d in extra_dirs] + [str(TEMPLATE_DIR)]),
                      undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False)
    env.filters["comment"] = _comment
    return env


def render(template: str, **data) -> str:
    """A template of templates/ rendered with data (a missing name is an error)."""
    return environment().get_template(template).render(**data)


def cython_contract() -> str:
    """codegen/runtime/_contract.pxi, the Cython declarations of cg_model.h (its constants, enums,
    function types, runtime table and descriptor), rendered from codegen.abi's reading
    of the header; the extension is built from the committed file, which a test keeps
    equal to this rendering."""
    def cython(parameters):       # C's struct tags dropped, Python's keywords escaped
        return ", ".join(f"{p.type.replace('struct ', '')}{'' if p.type.endswith('*') else ' '}"
                         f"{p.name}{'_' if keyword.iskeyword(p.name) else ''}"
                         for p in parameters)
    return render("python/contract.pxi.j2",
                  constants=[(n, "double" if isinstance(v, float) else "long")
                             for n, v in CONSTANTS.items()],
                  enums=[*STATUS_CODE, "CG_N_STATUS", *FLAGS, *PROPERTIES,
                         *(m.symbol for m in METHOD_INFO.values()), "CG_N_METHODS"],
                  functions=[dict(kind=f.kind, parameters=cython(f.parameters))
                             for f in FUNCTIONS.values()],
                  callbacks=[dict(kind=f.kind, parameters=cython(f.parameters))
                             for f in CALLBACKS.values()],
                  runtime=[dict(type=e.type, name=e.name, parameters=cython(e.parameters))
                           for e in RUNTIME.values()],
                  descriptor=[dict(type=d.type.replace("struct ", ""), name=d.name)
                              for d in DESCRIPTOR])
