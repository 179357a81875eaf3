"""The C contract, read from templates/runtime/cg_model.h: its one definition.

The header writes each list of the contract once, as an X-macro: the status
codes with their texts, the descriptor's flags, the integration methods with
their properties, the kinds of generated function with their parameters, and
the runtime's entry points. This module reads those lists into plain data,
so that Python holds no copy of them: ``function.j2`` takes its signatures
from :data:`FUNCTIONS`, ``emit`` the descriptor's pointer order and its
flags, the Cython declarations (``codegen/runtime/_contract.pxi``) are rendered from
:data:`RUNTIME`, :data:`STATUS_CODE` and :data:`CONSTANTS`, and the export and
the simulations take the methods' properties from :data:`METHOD_INFO`.

Pure Python (the standard library only): the formulation, the export and the
command line use it without loading the compiled runtime.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ABI_VERSION", "STATUS", "STATUS_CODE", "METHODS", "METHOD_INFO", "FLAGS",
           "PROPERTIES", "FUNCTIONS", "CALLBACKS", "RUNTIME", "DESCRIPTOR", "CONSTANTS", "Method",
           "Function", "Entry", "Parameter",
           "TEMPLATE_DIR", "RUNTIME_DIR", "method_applies"]


def _template_dir() -> Path:
    """templates/ of a source checkout, else the installed codegen.templates."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "templates", here / "templates"):
        if (candidate / "model" / "model.c.j2").is_file():
            return candidate
    raise FileNotFoundError("codegen's templates/ folder is missing from the installation")


TEMPLATE_DIR = _template_dir()
RUNTIME_DIR = TEMPLATE_DIR / "runtime"


@dataclass(frozen=True)
class Parameter:
    """One parameter of a C function: its type (``const double *``) and name."""
    type: str
    name: str
    optional: bool = False      # CG_OPTIONAL: its caller may pass NULL

    @property
    def written(self) -> bool:
        """A non-const pointer: an array the function writes."""
        return self.type.endswith("*") and not self.type.startswith("const")


@dataclass(frozen=True)
class Function:
    """A kind of generated function (CG_FUNCTION_LIST): its C type is cg_<kind>_fn."""
    kind: str
    parameters: tuple

    @property
    def signature(self) -> str:
        return ", ".join(f"{p.type}{'' if p.type.endswith('*') else ' '}{p.name}"
                         for p in self.parameters)

    @property
    def restricted_signature(self) -> str:
        """The signature with its arrays CG_RESTRICT (cg_math.h): a part's, of a function
        whose caller passes its arrays disjoint, so that a store to one output does not
        make the compiler load the others' values again."""
        return ", ".join(f"{p.type}CG_RESTRICT {p.name}" if p.type.endswith("*")
                         else f"{p.type} {p.name}" for p in self.parameters)

    @property
    def arguments(self) -> str:
        return ", ".join(p.name for p in self.parameters)

    @property
    def outputs(self) -> list:
        """The arrays it writes, in parameter order."""
        return [p.name for p in self.parameters if p.written]

    @property
    def optional(self) -> frozenset:
        """The outputs its caller may pass as NULL (CG_OPTIONAL)."""
        return frozenset(p.name for p in self.parameters if p.optional)

    @property
    def reads(self) -> list:
        """The parameters it only reads, in order."""
        return [p.name for p in self.parameters if not p.written]


@dataclass(frozen=True)
class Entry:
    """A runtime entry point (CG_RUNTIME_LIST): cg_<name> and cg_runtime's field <name>."""
    type: str
    name: str
    parameters: tuple


@dataclass(frozen=True)
class Method:
    """An integration method (CG_METHOD_LIST): its id, properties (CG_PROPERTY_LIST
    symbols) and the descriptor flags (CG_FLAG_LIST symbols) a model needs for it."""
    symbol: str
    id: int
    name: str
    properties: frozenset
    needs: frozenset

    @property
    def fixed_step(self) -> bool:
        """Steps of a given dt, landing on each output time; else adaptive."""
        return "CG_FIXED_STEP" in self.properties

    @property
    def tolerances(self) -> bool:
        """Reads rtol and atol."""
        return "CG_TOLERANCES" in self.properties

    @property
    def forms_jacobian(self) -> bool:
        return "CG_FORMS_JACOBIAN" in self.properties


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.S)


def _macro(text: str, name: str) -> str:
    """The body of #define name(X) or #define name, its continuation lines joined."""
    found = re.search(rf"^#define {name}(?:\(X\))?[ \\]((?:.*\\\n)*.*)$", text, re.M)
    if not found:
        raise ValueError(f"cg_model.h has no macro {name}")
    return found.group(1).replace("\\\n", " ")


def _outside_strings(text: str):
    """(index, character, depth) of each character of text outside its string literals,
    depth the parentheses open around it."""
    depth, quoted = 0, False
    for i, ch in enumerate(text):
        if ch == '"' and text[i - 1] != "\\":
            quoted = not quoted
        elif not quoted:
            depth -= ch == ")"
            yield i, ch, depth
            depth += ch == "("


def _split(args: str) -> list:
    """args split at its top-level commas."""
    cuts = [i for i, ch, depth in _outside_strings(args) if ch == "," and depth == 0]
    return [args[a + 1:b].strip() for a, b in zip([-1, *cuts], [*cuts, len(args)])]


def _items(text: str, name: str) -> list:
    """The argument lists of each X(...) in the X-macro name."""
    body, items, start = _macro(text, name), [], 0
    for i, ch, depth in _outside_strings(body):
        if ch == "(" and depth == 0:
            start = i + 1
        elif ch == ")" and depth == 0:
            items.append(_split(body[start:i]))
    return items


def _text(arg: str, defines: dict) -> str:
    """A C string: literals (their \\" and \\\\ unescaped), and CG_STR(NAME) for the value
    of #define NAME."""
    pieces = re.findall(r'"((?:[^"\\]|\\.)*)"|CG_STR\((\w+)\)', arg)
    return "".join(defines[macro] if macro else re.sub(r'\\(["\\])', r"\1", literal)
                   for literal, macro in pieces)


def _mask(expr: str, known: dict) -> frozenset:
    """The symbols of an expression a | b | c (0: none), each checked to be known."""
    names = frozenset(n.strip() for n in expr.split("|")) - {"0"}
    unknown = names - set(known)
    if unknown:
        raise ValueError(f"cg_model.h: {sorted(unknown)} are not in the list they belong to")
    return names


def _parameters(arg: str, defines: dict) -> tuple:
    """'(CG_MODEL_INPUTS, double *dx)' -> Parameters, the macros expanded."""
    inner = arg.strip()[1:-1]
    for macro, value in defines.items():
        inner = re.sub(rf"\b{macro}\b", value, inner)
    out = []
    for p in _split(inner):
        kind, name = re.fullmatch(r"(.*?[\s*])(\w+)", " ".join(p.split())).groups()
        words = kind.replace("*", " * ").split()
        out.append(Parameter(" ".join(w for w in words if w != "CG_OPTIONAL"), name,
                             "CG_OPTIONAL" in words))
    return tuple(out)


def _read(path: Path) -> dict:
    text = _strip_comments(path.read_text())
    defines = dict(re.findall(r"^#define (CG_[A-Z0-9_]+) ([^\\\n]+?)\s*$", text, re.M))
    status = [(sym, int(v), _text(msg, defines)) for sym, v, msg in _items(text, "CG_STATUS_LIST")]
    flags = {sym: int(v) for sym, v, _ in _items(text, "CG_FLAG_LIST")}
    props = {sym: int(v) for sym, v, _ in _items(text, "CG_PROPERTY_LIST")}
    methods = {}
    for sym, v, name, properties, needs in _items(text, "CG_METHOD_LIST"):
        name = _text(name, defines)
        methods[name] = Method(sym, int(v), name, _mask(properties, props), _mask(needs, flags))
    functions = {kind: Function(kind, _parameters(params, defines))
                 for kind, params in _items(text, "CG_FUNCTION_LIST")}
    callbacks = {name: Function(name, _parameters(params, defines))
                 for name, params in _items(text, "CG_CALLBACK_LIST")}
    runtime = {name: Entry(kind, name, _parameters(params, defines))
               for kind, name, params in _items(text, "CG_RUNTIME_LIST")}
    struct = re.search(r"typedef struct cg_model \{(.*?)\} cg_model;", text, re.S).group(1)
    struct = struct.replace("CG_FUNCTION_LIST(CG_FUNCTION_FIELD)",
                            " ".join(f"cg_{kind}_fn {kind};" for kind in functions))
    descriptor = []
    for declaration in filter(None, (d.strip() for d in struct.split(";"))):
        first, *more = (d.strip() for d in declaration.split(","))
        kind, name = re.fullmatch(r"(.*?[\s*])(\w+)", first).groups()
        descriptor += [Parameter(" ".join(kind.replace("*", " * ").split()), n)
                       for n in [name, *more]]
    numbers = {}
    for name, value in defines.items():
        try:
            numbers[name] = int(value.rstrip("L")) if re.fullmatch(r"-?\d+L?", value) \
                else float(value)
        except ValueError:
            continue                                  # not a number: a macro of macros
    return dict(version=numbers["CG_ABI_VERSION"], status=status, flags=flags, methods=methods,
                properties=props, functions=functions, callbacks=callbacks, runtime=runtime,
                descriptor=tuple(descriptor), constants=numbers)


_CONTRACT = _read(RUNTIME_DIR / "cg_model.h")

#: CG_ABI_VERSION
ABI_VERSION: int = _CONTRACT["version"]
#: {code: message} and {symbol: code} of every status (CG_STATUS_LIST)
STATUS = {code: message for _, code, message in _CONTRACT["status"]}
STATUS_CODE = {symbol: code for symbol, code, _ in _CONTRACT["status"]}
#: {symbol: value} of the descriptor's flags (CG_FLAG_LIST) and of the methods'
#: properties (CG_PROPERTY_LIST)
FLAGS: dict = _CONTRACT["flags"]
PROPERTIES: dict = _CONTRACT["properties"]
#: {name: Method} and {name: id} of the integration methods (CG_METHOD_LIST)
METHOD_INFO: dict = _CONTRACT["methods"]
METHODS = {name: m.id for name, m in METHOD_INFO.items()}
#: {kind: Function}, in the descriptor's order (CG_FUNCTION_LIST)
FUNCTIONS: dict = _CONTRACT["functions"]
#: {name: Function} of the functions a caller gives the runtime (CG_CALLBACK_LIST): the
#: type cg_<name>_fn each
CALLBACKS: dict = _CONTRACT["callbacks"]
#: {name: Entry} of the runtime's entry points, in cg_runtime's order (CG_RUNTIME_LIST)
RUNTIME: dict = _CONTRACT["runtime"]
#: the descriptor's fields (struct cg_model), in order, as Parameters
DESCRIPTOR: tuple = _CONTRACT["descriptor"]
#: {name: number} of the header's numeric #defines (CG_MANIFOLD_TOL, CG_MAX_STEPS, ...)
CONSTANTS: dict = _CONTRACT["constants"]


def method_applies(method: str, flags) -> bool:
    """Whether a model with these descriptor flags (symbols) can run method: the
    test cg_integrator_init makes (CG_ERR_METHOD), on the same table."""
    return METHOD_INFO[method].needs <= set(flags)
