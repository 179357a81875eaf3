"""The package's structure: its modules import each other without circles, each stage
imports only the stages under it, no module imports another's private names, and each
module holds one job of a readable size.

The graph is read from the sources: every import statement of every module
(those inside functions and under ``if TYPE_CHECKING:`` too, which a circle can hide
behind), resolved to the package's own modules. A name taken from a package's
``__init__`` that is assigned there before its first import is a read of a finished
value, not an import of what the package imports.
"""
import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]

def _modules(folder: pathlib.Path, package: str) -> dict:
    """{module name: path} of every .py and .pyx file under folder."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".py", ".pyx") or "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(folder).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join([package] + parts)] = path
    return out


def _is_package(path: pathlib.Path) -> bool:
    return path.name == "__init__.py"


def _early_names(path: pathlib.Path) -> set:
    """Names a package's __init__ assigns before its first import statement."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            break
        if isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _imports(path: pathlib.Path):
    """(level, module, names) of every import statement."""
    text = path.read_text()
    if path.suffix == ".pyx":          # Cython: the Python imports, line by line
        for m in re.finditer(r"^\s*from\s+(\.*)([\w.]*)\s+import\s+([\w\s,()]+)$", text, re.M):
            yield len(m.group(1)), m.group(2), [n.strip() for n in
                                                m.group(3).strip("()").split(",") if n.strip()]
        for m in re.finditer(r"^\s*import\s+([\w.]+)", text, re.M):
            yield 0, m.group(1), []
        return
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield 0, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            yield node.level, node.module or "", [a.name for a in node.names]


def import_graph(folder: pathlib.Path, package: str) -> dict:
    """{module: set of the package's modules it imports}."""
    modules = _modules(folder, package)
    graph = {name: set() for name in modules}
    for name, path in modules.items():
        base = name if _is_package(path) else name.rpartition(".")[0]
        for level, module, names in _imports(path):
            if level:
                anchor = base
                for _ in range(level - 1):
                    anchor = anchor.rpartition(".")[0]
                target = f"{anchor}.{module}" if module else anchor
            else:
                target = module
            if target not in modules:
                continue
            early = _early_names(modules[target]) if _is_package(modules[target]) else set()
            for n in names or [None]:
                sub = f"{target}.{n}" if n else None
                if sub in modules:
                    graph[name].add(sub)
                elif n not in early:
                    graph[name].add(target)
        graph[name].discard(name)
    return graph


def find_cycle(graph: dict):
    """A list of modules forming an import circle, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None
    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_codegen_has_no_import_circles():
    graph = import_graph(ROOT / "codegen", "codegen")
    # the graph is read: known edges of each kind are there
    assert {"codegen.programs.program", "codegen.algorithms.aba", "codegen.algorithms.jacobian",
            "codegen.algorithms.ldlt"} <= graph["codegen.algorithms.plan"]
    assert "codegen.formulation.appell" in graph["codegen"]                 # the package's face
    assert "codegen.runtime._runtime" in graph["codegen.runtime.compiled_model"]  # Cython
    assert "codegen.errors" in graph["codegen.runtime._runtime"]            # its Python imports
    assert "codegen.examples" in graph["codegen.bench.__main__"]     # from .. import, lazily
    assert "codegen.equations.equations_of_motion" in graph["codegen.programs.program"]  # typing
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_a_circle_behind_a_function_or_for_typing_is_found(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text('__version__ = "1"\nfrom .a import f\n')
    (pkg / "a.py").write_text("from . import __version__\nfrom .sub import b\n\ndef f():\n"
                              "    return b.g()\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def g():\n    return 1\n")
    assert find_cycle(import_graph(pkg, "pkg")) is None     # __version__: no edge
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                      "    from ..a import f\n\ndef g():\n    return 1\n")
    assert find_cycle(import_graph(pkg, "pkg")) == ["pkg.a", "pkg.sub.b", "pkg.a"]
    (pkg / "sub" / "b.py").write_text("def g():\n    from ..a import f\n    return f\n")
    assert find_cycle(import_graph(pkg, "pkg")) == ["pkg.a", "pkg.sub.b", "pkg.a"]


#: the stages in the order data flows through them, each allowed to import its own and the
#: ones before it (docs/design.md draws the same map)
STAGES = [{"version", "errors", "abi", "progress", "symbolic"},
          {"description", "equations"},
          {"flexible", "robots", "examples", "programs"},
          {"formulation"},
          {"algorithms"},
          {"emit"},
          {"runtime"},
          {"pipeline"},
          {"export", "animation", "identification"},
          {"bench", "__main__", ""}]
#: the one import against the flow: a run's convenience method, imported when it is called
UPWARD = {("codegen.runtime.results", "codegen.animation.page")}


def _stage(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def test_each_stage_imports_only_the_stages_under_it():
    rank = {name: k for k, stages in enumerate(STAGES) for name in stages}
    graph = import_graph(ROOT / "codegen", "codegen")
    assert set(map(_stage, graph)) <= set(rank), set(map(_stage, graph)) - set(rank)
    against = sorted((a, b) for a, targets in graph.items() for b in targets
                     if rank[_stage(b)] > rank[_stage(a)] and (a, b) not in UPWARD)
    assert not against, against
    assert UPWARD <= {(a, b) for a, targets in graph.items() for b in targets}


def test_no_module_imports_another_modules_private_names():
    """What modules share has a public name in the module that owns it."""
    found = []
    for path in sorted((ROOT / "codegen").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "")
                                                     .startswith("codegen")):
                found += [f"{path.relative_to(ROOT)}: {a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, found


#: the catalogues and the benchmarks are lists, and the Cython wrapper one class per
#: interface: the rest holds one job per file, of a size read in one sitting
LONG_ALLOWED = {"codegen/examples/__init__.py", "codegen/runtime/_runtime.pyx"}


def test_modules_are_short_and_the_top_folder_holds_few():
    long = []
    for path in sorted((ROOT / "codegen").rglob("*.py*")):
        name = str(path.relative_to(ROOT))
        if path.suffix not in (".py", ".pyx") or name in LONG_ALLOWED or "bench" in path.parts:
            continue
        lines = len(path.read_text().splitlines())
        if lines > 450:
            long.append((name, lines))
    assert not long, long
    plain = sorted(p.name for p in (ROOT / "codegen").glob("*.py"))
    assert len(plain) <= 8, plain
