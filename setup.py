"""Packaging.

- codegen._runtime (Cython) is compiled here, once: it is the Python face of
  every generated model, which calls the model's C through function pointers.
- The C templates in templates/ ship inside the package as codegen.templates.
The generated models themselves are compiled at run time by codegen.build.
"""
import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

# OpenMP runs rhs_batch and simulate_batch on all cores (prange)
runtime = Extension("codegen._runtime", ["codegen/_runtime.pyx"],
                    include_dirs=[numpy.get_include()],
                    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                    extra_compile_args=["-fopenmp"], extra_link_args=["-fopenmp"])

setup(
    packages=["codegen", "codegen.bench", "codegen.templates"],
    package_dir={"codegen": "codegen", "codegen.templates": "templates"},
    package_data={"codegen.templates": ["*.c", "*.h", "*.md", "fmi2/*.h"], "codegen": ["*.pyx"]},
    ext_modules=cythonize([runtime], language_level=3),
)
