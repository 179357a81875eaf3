"""Build one generated model's C as a shared library: ``python _buildext.py SPEC.json``.

Run in a child process by codegen.build so that the compiler's output is
captured whole and a crash of the toolchain cannot take the caller down.
SPEC holds: module, sources, include_dirs, build_dir, extra_compile_args.
It uses setuptools' compiler abstraction (the interpreter's own compiler,
flags and shared-library conventions) directly, not build_ext, which would
import Cython for nothing (half a second per model).
"""
import json
import os
import sys
import sysconfig


def main(spec_path: str) -> int:
    with open(spec_path) as fh:
        spec = json.load(fh)
    import setuptools  # noqa: F401  (provides distutils on Python >= 3.12)
    from distutils.ccompiler import new_compiler
    from distutils.sysconfig import customize_compiler

    cc = new_compiler()
    customize_compiler(cc)
    build = spec["build_dir"]
    objects = cc.compile(spec["sources"], output_dir=os.path.join(build, "obj"),
                         include_dirs=spec["include_dirs"],
                         extra_postargs=spec["extra_compile_args"])
    out = spec["module"] + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")
    cc.link_shared_object(objects, out, output_dir=build)
    print(json.dumps({"outputs": [out]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
