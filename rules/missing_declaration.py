"""DL102 missing-declaration."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from declint.facts import DYNAMIC_REASON, ClassFacts, Declaration
from declint.lazy import lazy_module
from declint.rule import FileContext, Invalid, Rule, Valid
from declint.types import Applicability, Fix, Position

if TYPE_CHECKING:
    import json

    import libcst as cst
else:
    cst = lazy_module("libcst")  # imported when a file is first checked (see declint/lazy.py)
    json = lazy_module("json")  # for the fix only: ~1 ms of the imports of a run after an edit

_IMPORTS = (
    "from torch import nn\n"
    "from tensorrt_llm._torch.models.modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin\n"
    "from tensorrt_llm._torch.models.modeling_utils import MultimodalPlaceholderMetadata, register_input_processor\n"
)


# The reason an unsafe fix writes: non-empty (DL104 stays quiet), and plainly a to-do for review.
TODO_REASON = "TODO: say why it cannot be changed (inserted by declint --unsafe-fixes)"


def _registered(modalities: str) -> str:
    keys = ", ".join(f'"{m}": "<{m}>"' for m in modalities.split())
    return (
        f'\n@register_input_processor(object, model_type="x", placeholder_metadata='
        f"MultimodalPlaceholderMetadata(placeholder_map={{{keys}}}))\n"
    )


class MissingDeclaration(Rule):
    """A multimodal model does not declare the attention backends of its encoders.

    Every multimodal model (a class registered with `register_input_processor`, or inheriting
    `MultimodalModelMixin`) must say, per encoder, which attention backends it supports, or that
    its attention cannot be changed. Without it, an `encoder_attention_backend` override is
    neither validated nor rejected: it may be silently ignored. The required encoders follow from
    the registered modalities (`placeholder_map` keys: image/video need "vision", audio needs
    "audio"), so a forgotten audio encoder is caught too. The map is read as `{...}` (with the
    keys of literals unpacked into it, `**{...}`), `dict(...)`, or the name of a module-level dict
    of the same file; given as `placeholder_map=` or as `MultimodalPlaceholderMetadata`'s first
    positional argument; in the decorator or in a module-level `placeholder_metadata` constant of
    the same file.
    A declaration that unpacks another (`{**Base.encoder_attention_backends, ...}`) holds encoders
    that cannot be read: DL104 reports it, and DL102 does not guess which are missing.

    A declaration inherited from a model ancestor counts, across files (the project index
    follows bases through imports and re-exports); the mixin's own empty default does not, and
    it hides every declaration after it in the class's method resolution order (C3, as Python
    computes it: `class M(MultimodalModelMixin, DeclaringMixin)` has the empty default at run time).
    `encoder_attention_backends = {}` explicitly declares a model without an attention encoder.
    """

    CODE = "DL102"
    NAME = "missing-declaration"
    SUMMARY = "a multimodal model has no per-encoder declaration, or misses one of its encoders"
    OPTIONS = ("declaration-attribute", "model-decorators", "model-mixins", "modality-encoders")
    FIX = (
        'unsafe: declares each missing encoder FixedEncoderAttention("TODO: ...") for review, importing '
        "the marker when needed; a subclass whose inherited declaration misses an encoder gets its own, "
        "copying the inherited entries (none when one cannot be copied faithfully: a get_args entry, a reason "
        "only known at run time)."
    )

    VALID: ClassVar = (
        Valid(
            _IMPORTS + _registered("image audio") + "class M(MultimodalModelMixin, nn.Module):\n"
            '    encoder_attention_backends = {\n        "vision": ("TRTLLM",),\n'
            '        "audio": FixedEncoderAttention("relative-position bias"),\n    }\n'
        ),
        Valid(
            _IMPORTS + _registered("image") + "class Base(MultimodalModelMixin, nn.Module):\n"
            '    encoder_attention_backends = {"vision": ("TRTLLM",)}\n\n'
            + _registered("image video")
            + "class Child(Base):\n    pass\n"
        ),
        Valid(
            _IMPORTS + _registered("image") + "class NoTower(MultimodalModelMixin):\n"
            "    encoder_attention_backends = {}\n"
        ),
        Valid(_IMPORTS + "class TextOnly(nn.Module):\n    pass\n"),
    )
    INVALID: ClassVar = (
        Invalid(
            _IMPORTS
            + _registered("image video")
            + "class LlavaNextModel(MultimodalModelMixin, nn.Module):\n    pass\n",
            expect=((6, 6),),
            message=(
                'multimodal model "LlavaNextModel" has no encoder_attention_backends declaration (own or '
                "inherited); declare its encoders: vision (registered modalities: image, video)"
            ),
        ),
        Invalid(
            _IMPORTS + _registered("image audio") + "class Phi4MMModel(MultimodalModelMixin):\n"
            '    encoder_attention_backends = {"vision": ("TRTLLM",)}\n',
            expect=((7, 4),),
            message='the declaration of "Phi4MMModel" misses encoder "audio" (registered modality "audio")',
        ),
        Invalid(
            _IMPORTS + "\nclass Base(MultimodalModelMixin):\n    pass\n\nclass Child(Base):\n    pass\n",
            expect=((5, 6), (8, 6)),
        ),
        Invalid(
            _IMPORTS + _registered("image") + "class Base(MultimodalModelMixin):\n"
            '    encoder_attention_backends = {"vision": ("TRTLLM",)}\n'
            + _registered("image audio")
            + "class WithAudio(Base):\n    pass\n",
            expect=((10, 6),),
            message=(
                '"WithAudio" inherits the declaration of "Base" (tensorrt_llm._torch.models.modeling_example), '
                'which misses encoder "audio" (registered modality "audio"); declare it on "WithAudio"'
            ),
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._attribute = str(self.config.get("declaration-attribute"))
        self._depth = 0
        # Class names defined more than once at the top level (e.g. under `if TYPE_CHECKING:`):
        # only for those is the line compared, since a node's line costs rendering the module.
        self._repeated = {
            name for name, count in Counter(c.qualname for c in context.facts.classes).items() if count > 1
        }

    @classmethod
    def applies_to(cls, context: FileContext) -> bool:
        return any(context.index.is_model(c) for c in context.facts.classes if c.qualname in context.index.classes)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef(node)
        self._depth += 1
        if self._depth == 1:  # the index holds top-level classes
            qualname = f"{self.context.module}.{node.name.value}"
            facts = self.index.classes.get(qualname)
            if (
                facts is not None
                and self.index.is_model(facts)
                and (qualname not in self._repeated or facts.line == _line(self, node))
            ):
                self._check(node, facts)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        super().leave_ClassDef(original_node)
        self._depth -= 1

    def _check(self, node: cst.ClassDef, facts: ClassFacts) -> None:
        declared = self.index.effective_declaration(facts)
        required = self.index.required_encoders(facts)
        if declared is None:
            self.report(node.name, self._missing_message(facts, required))
            # The fix goes where the declaration is missing first: a model ancestor that lacks one
            # too gets its own finding and fix, and this class then inherits it.
            if (
                required
                and required[0]
                and not any(f and self.index.is_model(f) for _, f in self.index.ancestors(facts))
            ):
                self._attach_fix(node, sorted(required[0]))
            return
        declaration, owner = declared
        if not declaration.is_literal or not declaration.entries or required is None:
            return  # unknown shape (DL104 reports it), or explicitly encoder-free
        for encoder, modality in sorted(required[0].items()):
            if encoder in declaration.encoders:
                continue
            if owner is facts:
                target = _declaration_target(node, self._attribute) or node.name
                self.report(
                    target,
                    f'the declaration of "{facts.name}" misses encoder "{encoder}" (registered modality "{modality}")',
                )
                self._attach_fix(node, [encoder])
            else:
                module = owner.qualname.rpartition(".")[0]
                self.report(
                    node.name,
                    f'"{facts.name}" inherits the declaration of "{owner.name}" ({module}), '
                    f'which misses encoder "{encoder}" (registered modality "{modality}"); '
                    f'declare it on "{facts.name}"',
                )
                self._attach_fix(node, [encoder], inherited=declaration)

    def _attach_fix(self, node: cst.ClassDef, encoders: Iterable[str], inherited: Declaration | None = None) -> None:
        """Unsafe: declaring an encoder fixed is a claim about the model that a person must review."""
        marker = str(self.config.get("fixed-marker"))
        entries: list[str] = []
        for entry in inherited.entries if inherited is not None else ():
            if entry.kind == "configurable":
                backends = ", ".join(json.dumps(b) for b in entry.backends) + ("," if len(entry.backends) == 1 else "")
                entries.append(f"{json.dumps(entry.encoder)}: ({backends})")
            elif entry.kind == "fixed" and entry.reason != DYNAMIC_REASON:
                entries.append(f"{json.dumps(entry.encoder)}: {marker}({json.dumps(entry.reason)})")
            else:
                return  # get_args(...), a reason only known at run time, an invalid entry: no faithful copy
        missing = list(encoders)
        entries += [f"{json.dumps(encoder)}: {marker}({json.dumps(TODO_REASON)})" for encoder in missing]
        homes = sorted(q.rpartition(".")[0] for q in self.index.classes if q.rpartition(".")[2] == marker)
        start = self.position(node.name).start
        names = ", ".join(f'"{encoder}"' for encoder in missing)
        fix = Fix(
            "add-declaration-entries",
            Applicability.UNSAFE,
            f"Declare encoder {names} {marker} with a TODO reason to review",
            Position(start.line, start.column),
            (self._attribute, marker, homes[0] if homes else "", *entries),
        )
        self.findings[-1] = dataclasses.replace(self.findings[-1], fix=fix)

    def _missing_message(self, facts: ClassFacts, required: tuple[dict[str, str], ClassFacts] | None) -> str:
        head = f'multimodal model "{facts.name}" has no {self._attribute} declaration (own or inherited)'
        hidden = self.index.hidden_declaration(facts)
        if hidden is not None:
            mixin, owner = hidden
            head = (
                f'multimodal model "{facts.name}" has no {self._attribute} declaration at run time: the default '
                f'of "{mixin.name}" comes first in its method resolution order and hides the declaration of '
                f'"{owner.name}"'
            )
        if not required or not required[0]:
            return f"{head}; declare its encoders, or {{}} when it has no attention encoder"
        encoders = ", ".join(sorted(required[0]))
        modalities = ", ".join(sorted({m for m in (required[1].modalities or ())}))
        return f"{head}; declare its encoders: {encoders} (registered modalities: {modalities})"


def _line(rule: Rule, node: cst.ClassDef) -> int:
    """Line of the `class` keyword, as ast reports it (decorators excluded)."""
    return int(rule.position(node.name).start.line)


def _declaration_target(node: cst.ClassDef, attribute: str) -> cst.CSTNode | None:
    """The name assigned by the last declaration in the body: the one Python keeps."""
    declared = declaration_assignments(node, attribute)
    return declared[-1][0] if declared else None


def declaration_assignments(node: cst.ClassDef, attribute: str) -> list[tuple[cst.Name, cst.BaseExpression]]:
    """(the target, the value) of each assignment of `attribute` in the class body, in order: the
    last is the one the class keeps (DL102 reports and fixes at it, DL104 checks it). Here, not in
    DL104's module: a check imports DL104's only for a file holding the attribute (GatedRule)."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return [
        pair
        for statement in body
        for small in (statement.body if isinstance(statement, cst.SimpleStatementLine) else ())
        for pair in _declared(small, attribute)
    ]


def _declared(statement: cst.BaseSmallStatement, attribute: str) -> list[tuple[cst.Name, cst.BaseExpression]]:
    """(the target, the value) of an assignment of `attribute`; none for another statement."""
    if isinstance(statement, cst.Assign):
        names = [t.target for t in statement.targets if isinstance(t.target, cst.Name)]
        return [(name, statement.value) for name in names if name.value == attribute][:1]
    if isinstance(statement, cst.AnnAssign) and isinstance(statement.target, cst.Name):
        if statement.target.value == attribute and statement.value is not None:
            return [(statement.target, statement.value)]
    return []
