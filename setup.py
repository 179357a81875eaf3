"""Packaging: the C and Cython templates in templates/ ship inside the package.

The generated extensions are built at run time by codegen.build, not here.
"""
from setuptools import setup

setup(
    packages=["codegen", "codegen.bench", "codegen.templates"],
    package_dir={"codegen": "codegen", "codegen.templates": "templates"},
    package_data={"codegen.templates": ["*.c", "*.h", "*.pyx", "*.txt", "*.md"]},
    include_package_data=True,
)
