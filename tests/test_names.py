"""The light name resolver answers as libcst's QualifiedNameProvider does, for what DL101 needs.

DL101 only uses import-derived and builtin qualified names. For every name and attribute chain
of the snippets below, the resolver must give exactly the import and builtin names that
`QualifiedNameProvider` gives (relative imports compared in libcst's relative form).
"""

from __future__ import annotations

import ast

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider, QualifiedNameSource

from declint.names import NameResolver

SNIPPETS = {
    "import-forms": (
        "import torch\nimport torch.nn.functional\nimport torch.nn.functional as F\n"
        "from torch.nn import functional as G\nfrom torch.nn.functional import scaled_dot_product_attention as sdpa\n"
        "torch.nn.functional.scaled_dot_product_attention\nF.scaled_dot_product_attention\nG.x\nsdpa\n"
    ),
    "relative": "from . import sibling\nfrom .. import parent as p\nfrom .mod import name\nsibling.f\np.g\nname\n",
    "shadowing": (
        "import torch.nn.functional as F\n\n"
        "def param(F):\n    return F.scaled_dot_product_attention\n\n"
        "def local():\n    F = None\n    return F.scaled_dot_product_attention\n\n"
        "def reads():\n    return F.scaled_dot_product_attention\n\n"
        "def local_import():\n    import math as F\n    return F.sqrt\n"
    ),
    "global-nonlocal": (
        "import torch.nn.functional as F\n\n"
        "def g():\n    global F\n    F = 1\n    return F.x\n\n"
        "def outer():\n    import os as F\n    def inner():\n        nonlocal F\n"
        "        return F.path\n    return inner\n"
    ),
    "global-store": (
        "import torch.nn.functional as F\n\n"
        "def g():\n    global getattr, sdpa\n    getattr = 1\n    sdpa = F.scaled_dot_product_attention\n\n"
        "def h():\n    return getattr, sdpa, len\n"
    ),
    "class-scope": (
        "import torch.nn.functional as F\n\n"
        "class C:\n    import os as F\n    a = F.path\n"
        "    def m(self):\n        return F.scaled_dot_product_attention\n"
        "    b = [F.sep for _ in range(2)]\n"
    ),
    "comprehensions": (
        "import os as F\n"
        "xs = [F for F in range(3)]\nys = [F.path for x in range(3)]\nzs = {k: F.sep for k in F.environ}\n"
        "ws = [y for F in range(3) if (y := F)]\n"
    ),
    "builtins": "getattr\nlen(x)\ngetattr = None\ngetattr\n",
    "assignments": (
        "import torch.nn.functional as F\n"
        "F = F\nfor F in ():\n    pass\nwith open('x') as F:\n    pass\ntry:\n    pass\nexcept E as F:\n    pass\nF.x\n"
    ),
    "lambdas-defaults": (
        "import torch.nn.functional as F\n"
        "h = lambda F: F.x\nk = lambda q, f=F.x: f\n"
        "def d(a=F.scaled_dot_product_attention, *, b: F.T = None) -> F.R:\n    return a\n"
    ),
    "match": "import os as F\nmatch x:\n    case F.sep:\n        pass\n    case [F]:\n        F.path\n",
    "decorators": "import functools as ft\n@ft.cache\ndef f():\n    pass\n@ft.wraps(f)\nclass K(ft.Base):\n    pass\n",
}


def _libcst_names(source: str) -> dict[tuple[int, int, int, int], frozenset[str]]:
    wrapper = MetadataWrapper(cst.parse_module(source))
    names = wrapper.resolve(QualifiedNameProvider)
    positions = wrapper.resolve(PositionProvider)
    found: dict[tuple[int, int, int, int], frozenset[str]] = {}
    for node, lazy in names.items():
        qualified = lazy() if callable(lazy) else lazy  # libcst computes some lazily
        if isinstance(node, cst.Name | cst.Attribute):
            where = positions[node]
            key = (where.start.line, where.start.column, where.end.line, where.end.column)
            wanted = {
                q.name for q in qualified if q.source in (QualifiedNameSource.IMPORT, QualifiedNameSource.BUILTIN)
            }
            found[key] = frozenset(wanted)
    return found


def _resolver_names(source: str) -> dict[tuple[int, int, int, int], frozenset[str]]:
    tree = ast.parse(source)
    resolver = NameResolver(tree)  # no module name: relative imports stay relative, as in libcst
    found: dict[tuple[int, int, int, int], frozenset[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Load):
            assert node.end_lineno is not None and node.end_col_offset is not None
            key = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
            found[key] = resolver.qualified(node)
    return found


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_resolver_matches_libcst_on_every_loaded_name(name: str) -> None:
    source = SNIPPETS[name]
    ours = _resolver_names(source)
    theirs = _libcst_names(source)
    compared = {key: theirs.get(key, frozenset()) for key in ours}
    assert ours == compared
    assert any(ours.values()), "the snippet resolves nothing: it tests nothing"


def test_relative_imports_become_absolute_with_a_module_name() -> None:
    tree = ast.parse("from . import sibling\nfrom ..pkg import name\nsibling.f\nname\n")
    resolver = NameResolver(tree, "tensorrt_llm._torch.models.modeling_x")
    loads = [n for n in ast.walk(tree) if isinstance(n, ast.Name | ast.Attribute) and isinstance(n.ctx, ast.Load)]
    assert sorted(q for node in loads for q in resolver.qualified(node)) == [
        "tensorrt_llm._torch.models.sibling",
        "tensorrt_llm._torch.models.sibling.f",
        "tensorrt_llm._torch.pkg.name",
    ]
    package_tree = ast.parse("from . import x\nx\n")
    package = NameResolver(package_tree, "tensorrt_llm._torch", is_package=True)
    name = next(n for n in ast.walk(package_tree) if isinstance(n, ast.Name))
    assert package.qualified(name) == {"tensorrt_llm._torch.x"}
    assert package.absolute(None, 2) == "tensorrt_llm"


def test_deep_nesting_does_not_exhaust_the_recursion_limit() -> None:
    source = "import os as F\nx = " + "[" * 90 + "F.path" + "]" * 90 + "\n"
    tree = ast.parse(source)
    resolver = NameResolver(tree)
    attribute = next(n for n in ast.walk(tree) if isinstance(n, ast.Attribute))
    assert resolver.qualified(attribute) == {"os.path"}


def test_last_binding_drops_an_import_the_module_rebinds_for_good() -> None:
    """DL101's resolver (`last_binding=True`): a module-level import the module rebinds later
    names nothing in a function or below the rebinding; a rebinding in an `if` may not run, and
    a later import (even one in a `try`) binds the name again. Without the option, as libcst."""
    source = (
        "from torch import nn as a, nn as b, nn as c, nn as d\n"
        "x = a.f\n"  # 2: before the rebinding
        "a = 1\nif c:\n    b = 2\nd = 3\ntry:\n    from torch import nn as d\nexcept ImportError:\n    pass\n"
        "y = a.f\n"  # 11
        "def g():\n    return a.f, b.f, d.f\n"  # 13
    )
    tree = ast.parse(source)
    found: dict[int, list[frozenset[str]]] = {}
    for last_binding in (False, True):
        resolver = NameResolver(tree, last_binding=last_binding)
        loads = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "f"]
        for node in sorted(loads, key=lambda n: (n.lineno, n.col_offset)):
            found.setdefault(node.lineno, []).append(resolver.qualified(node))
    nn = frozenset({"torch.nn.f"})
    assert found == {2: [nn, nn], 11: [nn, frozenset()], 13: [nn, nn, nn, frozenset(), nn, nn]}
