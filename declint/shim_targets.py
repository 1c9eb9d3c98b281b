"""`declint shim-targets PATH`: does every runtime-shim target exist, with a compatible
signature, in a TensorRT-LLM source tree? Static: the tree is read, never imported.

Classes, functions and the Literal come from declint's phase-1 facts (the same extraction the
engine indexes a project with); parameter lists from the standard library's `ast`, since facts
do not keep signatures. The target table is the runtime shim's own (`declint.runtime_shim.targets`).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path

from declint.errors import UsageError
from declint.facts import FactOptions, LiteralDef, ModuleFacts, extract_facts
from declint.runtime_shim.targets import TARGETS, Target, signature_problem

_OPTIONS = FactOptions("encoder_attention_backends", "FixedEncoderAttention", ("register_input_processor",))


@dataclass(frozen=True)
class Result:
    key: str
    state: str  # "ok" | "missing" | "incompatible"
    where: str
    detail: str = ""


def tree_root(path: Path) -> Path:
    if (path / "tensorrt_llm").is_dir():
        return path
    if path.name == "tensorrt_llm" and path.is_dir():
        return path.parent
    raise UsageError(f"{path}: no tensorrt_llm package here (give the source tree or its tensorrt_llm directory)")


def check(path: Path) -> list[Result]:
    root = tree_root(path)
    return [_check(target, root) for target in TARGETS]


def _module_file(root: Path, module: str) -> Path | None:
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _check(target: Target, root: Path) -> Result:
    found = [(module, file) for module in target.modules if (file := _module_file(root, module)) is not None]
    if not found:
        return Result(target.key, "missing", " | ".join(target.modules), "module not found")
    problems = []
    for module, file in found:
        text = file.read_text(encoding="utf-8", errors="replace")
        facts = extract_facts(text, module, str(file), _OPTIONS, file.name == "__init__.py")
        where = f"{module}.{target.qualname}"
        problem = _problem(target, facts, text)
        if problem is None:
            return Result(target.key, "ok", where)
        problems.append((where, problem))
    where, problem = problems[0]
    return Result(target.key, "missing" if problem == "not found" else "incompatible", where, problem)


def _problem(target: Target, facts: ModuleFacts, text: str) -> str | None:
    head, _, member = target.qualname.partition(".")
    if target.kind == "literal":
        return None if any(_runtime_literal(lit, head) for lit in facts.literals) else "not found"
    if target.kind == "class":
        return None if any(c.name == head for c in facts.classes) else "not found"
    node = _function(ast.parse(text), head, member)
    if node is None:
        return "not found"
    decorators = {d.id for d in node.decorator_list if isinstance(d, ast.Name)}
    if target.kind == "classmethod" and "classmethod" not in decorators:
        return "not a classmethod"
    arguments = node.args
    names = [a.arg for a in [*arguments.posonlyargs, *arguments.args]]
    if target.kind in ("method", "classmethod"):
        names = names[1:]
    variadic = arguments.vararg is not None or arguments.kwarg is not None
    return signature_problem(target, names, variadic=variadic)


def _runtime_literal(literal: LiteralDef, name: str) -> bool:
    """A Literal with members named `name` that the running program sees, as the shim does
    (`typing.get_args` of it): not one only a type checker reads, nor an Optional of one."""
    return literal.name == name and bool(literal.members) and not (literal.optional or literal.type_checking)


def _function(tree: ast.Module, head: str, member: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    scope: list[ast.stmt] = tree.body
    name = head
    if member:
        owner = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == head), None)
        if owner is None:
            return None
        scope, name = owner.body, member
    return next((n for n in scope if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name), None)


def render(results: list[Result], output_format: str) -> str:
    if output_format == "json":
        rows = [{"key": r.key, "state": r.state, "where": r.where, "detail": r.detail} for r in results]
        return json.dumps({"schema_version": 1, "targets": rows}, indent=2) + "\n"
    lines = [f"{r.key:<24} {r.state:<13} {r.where}" + (f": {r.detail}" if r.detail else "") for r in results]
    bad = sum(r.state != "ok" for r in results)
    lines.append(f"{len(results) - bad} of {len(results)} targets ok" if bad else f"All {len(results)} targets ok.")
    return "\n".join(lines) + "\n"
