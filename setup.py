"""Packaging.

- codegen.runtime._runtime (Cython) is compiled here, once, together with the C
  runtime of templates/runtime (the solve, the constraint elimination, the
  integrators): it drives every generated model through the model's
  descriptor, so a new model costs one compile of its own small C file.
- The templates ship as codegen.templates, grouped by what they build:
  runtime/ (the C runtime), model/ (a model's C), export/ (the standalone
  driver, the FMU and its headers), python/ (the Cython contract), animation/
  and bench/.
"""
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

RUNTIME = Path("templates") / "runtime"

# OpenMP runs rhs_batch and simulate_batch on all cores (prange)
# cg_fused.c is not compiled on its own: a fused model's C includes it
SOURCES = sorted(str(p) for p in RUNTIME.glob("cg_*.c") if p.name != "cg_fused.c")
runtime = Extension("codegen.runtime._runtime", ["codegen/runtime/_runtime.pyx"] + SOURCES,
                    include_dirs=[numpy.get_include(), str(RUNTIME)],
                    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                    # -fno-wrapv undoes Python's own -fwrapv: signed overflow defined to
                    # wrap keeps GCC from turning int indices into pointer steps, 10 %
                    # of the Jacobian's time in the solves (Cython's code needs no wrapv,
                    # as NumPy's and SciPy's builds show)
                    extra_compile_args=["-fopenmp", "-O2", "-fno-math-errno", "-fno-wrapv"],
                    extra_link_args=["-fopenmp"])

setup(
    packages=find_packages(include=["codegen", "codegen.*"]) + ["codegen.templates",
                                                                "codegen.templates.runtime"],
    package_dir={"codegen": "codegen", "codegen.templates": "templates",
                 "codegen.templates.runtime": "templates/runtime"},
    # three.js (MIT, its LICENSE beside it) is inlined into every animation page
    package_data={"codegen.templates": ["*.md", "model/*.j2", "export/*.j2", "export/fmi2/*.h",
                                        "export/fmi3/*.h",
                                        "python/*.j2", "animation/*", "bench/*.j2"],
                  "codegen.animation": ["vendor/*"],
                  "codegen.robots": ["descriptions/*"],
                  "codegen.templates.runtime": ["*.c", "*.h"],
                  "codegen.runtime": ["*.pyx", "*.pxi"]},
    ext_modules=cythonize([runtime], language_level=3),
)
