"""The classes, functions and methods a source file defines, found with tree-sitter grammars.

One grammar package per language (tree-sitter-python, -javascript, -typescript, -go, -rust):
small wheels with the grammar compiled in, so nothing is downloaded at run time. Only the
levels where definitions live are walked (modules, class bodies, impl blocks, exports), never
function bodies, which keeps a 10,000-file repository quick to map."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

MAX_SIGNATURE = 160  # characters of a signature kept for the map


class Symbol(NamedTuple):
    """A tuple, so a map of 100,000 symbols loads from the cache quickly."""

    name: str  # qualified: "Class.method", "Type.method" for Go/Rust methods
    kind: str  # class, function, method, struct, interface, type, enum, trait, impl, module
    line: int  # 1-based, first line (decorators included)
    end: int  # 1-based, last line
    signature: str  # the definition's header on one line: "def f(a, b=1) -> int"

    @property
    def short(self) -> str:
        return self.name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class _Grammar:
    module: str  # the grammar package
    function: str  # its function returning the language pointer
    definitions: dict[str, str]  # node type -> kind
    containers: frozenset[str]  # node types whose children may hold definitions
    wrappers: frozenset[str]  # node types wrapping one definition (decorators, export)


_JS_DEFS = {
    "class_declaration": "class",
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "method_definition": "method",
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "module": "module",
    "internal_module": "module",
    "variable_declarator": "function",  # only when its value is a function (see _named)
}
_JS_CONTAINERS = frozenset(
    {"program", "class_body", "statement_block", "lexical_declaration", "variable_declaration"}
)
_JS_WRAPPERS = frozenset({"export_statement", "ambient_declaration"})

GRAMMARS: dict[str, _Grammar] = {
    "python": _Grammar(
        "tree_sitter_python",
        "language",
        {"class_definition": "class", "function_definition": "function"},
        # Definitions under `if TYPE_CHECKING:` / `try: ... except ImportError:` count too.
        frozenset(
            {"module", "block", "if_statement", "else_clause", "elif_clause", "try_statement"}
            | {"except_clause"}
        ),
        frozenset({"decorated_definition"}),
    ),
    "javascript": _Grammar(
        "tree_sitter_javascript", "language", _JS_DEFS, _JS_CONTAINERS, _JS_WRAPPERS
    ),
    "typescript": _Grammar(
        "tree_sitter_typescript", "language_typescript", _JS_DEFS, _JS_CONTAINERS, _JS_WRAPPERS
    ),
    "tsx": _Grammar(
        "tree_sitter_typescript", "language_tsx", _JS_DEFS, _JS_CONTAINERS, _JS_WRAPPERS
    ),
    "go": _Grammar(
        "tree_sitter_go",
        "language",
        {
            "function_declaration": "function",
            "method_declaration": "method",
            "type_spec": "type",
        },
        frozenset({"source_file", "type_declaration"}),
        frozenset(),
    ),
    "rust": _Grammar(
        "tree_sitter_rust",
        "language",
        {
            "function_item": "function",
            "function_signature_item": "function",
            "struct_item": "struct",
            "enum_item": "enum",
            "trait_item": "trait",
            "impl_item": "impl",
            "mod_item": "module",
            "type_item": "type",
            "macro_definition": "function",
        },
        frozenset({"source_file", "declaration_list"}),
        frozenset(),
    ),
}

EXTENSIONS = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
}


def language_of(path: str) -> str | None:
    dot = path.rfind(".")
    return EXTENSIONS.get(path[dot:].lower()) if dot >= 0 else None


@cache
def _parser(language: str) -> Any | None:
    """A tree-sitter parser for `language`, or None where the grammar is not installed."""
    try:
        import tree_sitter

        grammar = GRAMMARS[language]
        module = importlib.import_module(grammar.module)
        lang = tree_sitter.Language(getattr(module, grammar.function)())
        return tree_sitter.Parser(lang)
    except (ImportError, AttributeError, ValueError):
        return None


def parser_available(language: str = "python") -> bool:
    return _parser(language) is not None


def parse_symbols(path: str, data: bytes) -> list[Symbol] | None:
    """The definitions in `data` (the bytes of `path`), in file order; None when the file's
    language has no grammar here (the map then lists the file without symbols)."""
    language = language_of(path)
    parser = _parser(language) if language else None
    if parser is None:
        return None
    tree = parser.parse(data)
    found: list[Symbol] = []
    _walk(tree.root_node, _Scope(GRAMMARS[language], data, found))
    return found


@dataclass
class _Scope:
    grammar: _Grammar
    data: bytes
    out: list[Symbol]
    prefix: str = ""  # qualified name of the enclosing class/impl/module, with a dot
    in_type: bool = False  # functions here are methods


def _walk(node: Any, scope: _Scope, outer: Any = None) -> None:
    """Collect definitions among `node`'s children; `outer` is a wrapper whose first line
    (a decorator, `export`) belongs to the definition it wraps."""
    grammar = scope.grammar
    for child in node.named_children:
        kind = child.type
        if kind in grammar.wrappers:
            _walk(child, scope, outer or child)
        elif kind in grammar.definitions:
            _definition(child, scope, outer)
        elif kind in grammar.containers:
            _walk(child, scope)


_NESTING = ("class", "impl", "trait", "module", "interface")


def _definition(node: Any, scope: _Scope, outer: Any) -> None:
    named = _named(node, scope.data)
    if named is None:
        return
    name, body = named
    kind = scope.grammar.definitions[node.type]
    if kind == "function" and scope.in_type:
        kind = "method"
    owner = _owner(node, scope.data)
    qualified = f"{owner}.{name}" if owner else f"{scope.prefix}{name}"
    start = (outer or node).start_point[0] + 1
    signature = _signature(node, body, scope.data)
    if node.type == "type_spec" and body is not None:  # Go: `type Server struct`
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(body.type, "type")
        signature = f"type {name} {kind if kind != 'type' else _text(body, scope.data)[:60]}"
    scope.out.append(Symbol(qualified, kind, start, node.end_point[0] + 1, signature))
    if body is not None and kind in _NESTING:
        inner = name if kind != "impl" else name.split(" for ", 1)[-1].split("<", 1)[0]
        nested = _Scope(
            scope.grammar, scope.data, scope.out, f"{scope.prefix}{inner}.", kind != "module"
        )
        _walk(body, nested)


def _signature(node: Any, body: Any, data: bytes) -> str:
    """The definition up to its body, on one line: `def f(a, b=1) -> int`."""
    head_end = body.start_byte if body is not None else node.end_byte
    words = data[node.start_byte : head_end].decode("utf-8", "replace").split()
    return " ".join(words).rstrip("{:=; ").strip()[:MAX_SIGNATURE]


def _text(node: Any, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _named(node: Any, data: bytes) -> tuple[str, Any] | None:
    """(name, body node) of a definition, or None when it is not one we map (a variable
    holding no function)."""
    body = node.child_by_field_name("body")
    if node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        if value is None or value.type not in ("arrow_function", "function_expression"):
            return None
        body = value.child_by_field_name("body")
    if node.type == "impl_item":
        target = node.child_by_field_name("type")
        trait = node.child_by_field_name("trait")
        if target is None:
            return None
        name = _text(target, data)
        return (f"{_text(trait, data)} for {name}" if trait else name), body
    if node.type == "type_spec":
        body = node.child_by_field_name("type")
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    return _text(name_node, data), body


def _owner(node: Any, data: bytes) -> str:
    """A Go method's receiver type: `func (s *Server) Start()` is Server.Start."""
    if node.type != "method_declaration":
        return ""
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return ""
    words = _text(receiver, data).strip("()").replace("*", " ").split()
    return words[-1].split("[", 1)[0] if words else ""
