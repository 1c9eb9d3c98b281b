"""DL104 invalid-declaration."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from declint.config import Config, closest, did_you_mean
from declint.facts import DeclEntry, ModuleFacts, name_matches, static_value
from declint.index import ProjectIndex
from declint.lazy import lazy_module
from declint.needles import declaration_attribute
from declint.rule import FileContext, Invalid, Rule, Valid
from declint.rules.missing_declaration import declaration_assignments
from declint.types import Applicability, Fix

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = lazy_module("libcst")  # imported when a file is first checked (see declint/lazy.py)

_PRELUDE = (
    "from tensorrt_llm._torch.models.modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin\n"
    "\n"
    "class M(MultimodalModelMixin):\n"
)


class InvalidDeclaration(Rule):
    """A per-encoder declaration that cannot mean what it says.

    The declaration maps each encoder of a model to the backends it supports, read at load time
    to accept or reject `encoder_attention_backend` overrides. A backend name that is not a
    member of the shared Literal (a typo, a wrong case, two names Python joins where a comma is
    missing: `"TRTLLM" "FLASHINFER"`) can never be selected; an unknown encoder
    name is never looked up (its entry is checked all the same, under the name it likely means);
    a fixed encoder without a reason leaves the user's rejected override unexplained; a duplicate
    (an encoder, or the whole declaration assigned twice in a class body) silently overrides its
    twin.

    Accepted entry values: a tuple (or list/set) of Literal members, `typing.get_args(<Literal>)`
    of the shared Literal for all of them (also wrapped in `tuple(...)` or `list(...)`; imported under any
    name, or through a re-export; the
    `get_args` of another Literal, such as the MoE backends', is reported: the model would accept
    none of the names the docs table then lists), or `FixedEncoderAttention("<reason>")`: one
    reason, a non-blank string (None, a number, unpacked or extra arguments are reported; a
    constant's name, a call or an f-string with a placeholder is accepted, as it is only known at
    run time). The marker and `get_args` are recognised under any import alias. `{}` declares a model without an
    attention encoder. A model mixin's own default (`encoder_attention_backends = None` in
    `MultimodalModelMixin`, see `model-mixins`) declares no model's encoders and is not checked.
    """

    CODE = "DL104"
    NAME = "invalid-declaration"
    SUMMARY = "a declaration names an unknown backend or encoder, a fixed encoder without reason, duplicates"
    OPTIONS = ("declaration-attribute", "fixed-marker", "encoders", "shared-literal")
    FIX = (
        'safe: a backend name in the wrong case becomes the member ("trtllm" -> "TRTLLM"). unsafe: a '
        'misspelt backend or encoder name becomes the name the message suggests ("FLASHINFR" -> '
        '"FLASHINFER"); a name with no close match gets no fix, nor one whose fix would list a name '
        "or an encoder twice (a second wrong-case copy, a key the dict already has)."
    )

    VALID: ClassVar = (
        Valid(_PRELUDE + '    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM", "FLASHINFER")}\n'),
        Valid(
            _PRELUDE + '    encoder_attention_backends = {"audio": FixedEncoderAttention("relative-position bias")}\n'
        ),
        Valid(_PRELUDE + "    encoder_attention_backends = {}\n"),
        Valid(
            "from typing import ClassVar\n\nclass MultimodalModelMixin:\n    encoder_attention_backends: ClassVar = None\n"
        ),
        Valid(
            "import typing\nfrom tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend\n"
            + _PRELUDE
            + '    encoder_attention_backends = {"vision": typing.get_args(EncoderAttentionBackend)}\n'
        ),
    )
    INVALID: ClassVar = (
        Invalid(
            _PRELUDE + '    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM", "FLASHINFR")}\n',
            expect=((4, 66),),
            message=(
                'encoder "vision": "FLASHINFR" is not a member of EncoderAttentionBackend (did you mean "FLASHINFER"?)'
            ),
        ),
        Invalid(
            _PRELUDE + '    encoder_attention_backends = {"vision": ("trtllm",)}\n',
            expect=((4, 45),),
            message='encoder "vision": "trtllm" is not a member of EncoderAttentionBackend (did you mean "TRTLLM"?)',
        ),
        Invalid(
            _PRELUDE + '    encoder_attention_backends = {"visoin": ("TRTLLM",)}\n',
            expect=((4, 34),),
            message='unknown encoder "visoin" (did you mean "vision"?); known encoders: vision, audio',
        ),
        Invalid(
            _PRELUDE + '    encoder_attention_backends = {"vision": FixedEncoderAttention()}\n',
            expect=((4, 44),),
            message='encoder "vision" is declared FixedEncoderAttention without a reason; say why its attention cannot be changed',
        ),
        Invalid(
            _PRELUDE + '    encoder_attention_backends = {"audio": FixedEncoderAttention("  ")}\n', expect=((4, 43),)
        ),
        Invalid(
            _PRELUDE + '    encoder_attention_backends = {"audio": FixedEncoderAttention(1)}\n',
            expect=((4, 65),),
            message='encoder "audio": the reason of FixedEncoderAttention must be a string, not 1',
        ),
        Invalid(
            _PRELUDE
            + '    encoder_attention_backends = {\n        "vision": ("TRTLLM",),\n        "vision": ("VANILLA",),\n    }\n',
            expect=((6, 8),),
            message='encoder "vision" is declared twice; the last entry silently wins',
        ),
        Invalid(_PRELUDE + '    encoder_attention_backends = {"vision": ("TRTLLM", "TRTLLM")}\n', expect=((4, 55),)),
        Invalid(
            _PRELUDE
            + '    encoder_attention_backends = {"vision": ("TRTLLM",)}\n'
            + '    encoder_attention_backends = {"vision": ("VANILLA",)}\n',
            expect=((4, 4),),
            message="encoder_attention_backends is overridden by the assignment on line 5 and has no effect; remove it",
        ),
        Invalid(_PRELUDE + '    encoder_attention_backends = {"vision": ()}\n', expect=((4, 34),)),
        Invalid(_PRELUDE + '    encoder_attention_backends = {"vision": "TRTLLM"}\n', expect=((4, 44),)),
        Invalid(_PRELUDE + "    encoder_attention_backends = dict(vision=('TRTLLM',))\n", expect=((4, 33),)),
        Invalid(  # an implicit concatenation is one literal: checked, not fixed (the fix rewrites one token)
            _PRELUDE + '    encoder_attention_backends = {"vision": ("VANILLA", "TRT" "LLM", "FLASH" "INFR")}\n',
            expect=((4, 69),),
            message='encoder "vision": "FLASHINFR" is not a member of EncoderAttentionBackend (did you mean "FLASHINFER"?)',
        ),
        Invalid(
            "from typing import get_args\nfrom tensorrt_llm.llmapi.llm_args import MoeBackend\n"
            + _PRELUDE
            + '    encoder_attention_backends = {"vision": get_args(MoeBackend)}\n',
            expect=((6, 44),),
            message='encoder "vision": get_args must be given the shared Literal EncoderAttentionBackend, not MoeBackend',
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._attribute = str(self.config.get("declaration-attribute"))
        self._marker = str(self.config.get("fixed-marker"))
        self._encoders = self.config.str_list("encoders")
        self._members = self.index.literal_members
        self._literal = self.index.literal_name
        self._class: cst.ClassDef | None = None  # the class whose declaration is being checked
        self._bindings = _bindings(context.facts)

    @classmethod
    def needles(cls, config: Config, index: ProjectIndex) -> tuple[bytes, ...]:
        return declaration_attribute(config)  # the registry's too: see declint/needles.py

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef(node)
        declared = declaration_assignments(node, self._attribute)
        if not declared or self.index.is_mixin(f"{self.context.module}.{node.name.value}"):
            return  # a model mixin's own default (`= None`, `= {}`) is no model's declaration
        # Python keeps the last assignment: only its contents matter, the others are dead code.
        # (Positions are asked for only then: computing them is a pass over the whole module.)
        if len(declared) > 1:
            last = self.position(declared[-1][0]).start.line
            for target, _ in declared[:-1]:
                self.report(
                    target,
                    f"{self._attribute} is overridden by the assignment on line {last} and has no effect; remove it",
                )
        self._class = node
        self._check_declaration(declared[-1][1])

    def _check_declaration(self, value: cst.BaseExpression) -> None:
        if not isinstance(value, cst.Dict):
            self.report(
                value,
                f"{self._attribute} must be a dict literal mapping encoder names to "
                "backends, so it can be checked without running the code",
            )
            return
        seen: set[str] = set()
        # The keys there are, and those a fix renames a key to: no second fix writes one again.
        keys = set(_strings(element.key for element in value.elements if isinstance(element, cst.DictElement)))
        for element in value.elements:
            if not isinstance(element, cst.DictElement):
                self.report(element, f"{self._attribute} must not unpack other mappings (`**`)")
                continue
            encoder = self._check_encoder(element.key, seen, keys)
            if encoder is not None:
                self._check_entry(encoder, element.key, element.value)

    def _check_encoder(self, key: cst.BaseExpression, seen: set[str], keys: set[str]) -> str | None:
        if not isinstance(key, cst.SimpleString) or not isinstance(key.evaluated_value, str):
            self.report(key, "encoder names must be string literals")
            return None
        encoder = key.evaluated_value
        if encoder not in self._encoders:
            known, guess = ", ".join(self._encoders), closest(encoder, self._encoders)
            self.report(key, f'unknown encoder "{encoder}"{did_you_mean(guess)}; known encoders: {known}')
            self._attach_replacement(encoder, guess, Applicability.UNSAFE, keys)
            # Its entry is still checked: a problem found only once the key is fixed would leave
            # `--fix --unsafe-fixes` with a finding its own output introduced. The entry's findings
            # name the encoder the key's fix gives it, so that fix changes none of them (`--fix`
            # refuses a fix after which a finding reads differently: it counts as a new one).
            return guess if guess is not None and guess.isidentifier() else encoder
        if encoder in seen:
            self.report(key, f'encoder "{encoder}" is declared twice; the last entry silently wins')
        seen.add(encoder)
        return encoder

    def _check_entry(self, encoder: str, key: cst.BaseExpression, value: cst.BaseExpression) -> None:
        value = _unwrap_tuple_call(value)
        if isinstance(value, cst.Tuple | cst.List | cst.Set):
            if not value.elements:
                self.report(
                    key, f'encoder "{encoder}" lists no backends; declare it {self._marker}("<reason>") instead'
                )
            self._check_backends(encoder, value)
        elif isinstance(value, cst.Call) and name_matches(self._resolved(value.func), self._marker):
            self._check_reason(encoder, value)
        elif isinstance(value, cst.Call) and name_matches(self._resolved(value.func), "get_args"):
            written = key.evaluated_value if isinstance(key, cst.SimpleString) else None
            self._check_get_args(encoder, str(written or encoder), value)
        else:
            self.report(value, f'encoder "{encoder}": expected a tuple of backend names or {self._marker}("<reason>")')

    def _resolved(self, func: cst.BaseExpression) -> str:
        """The callee's dotted name through this module's imports, as the facts resolve it (so
        `FixedEncoderAttention as FEA` is the marker here as it is in DL102 and the docs table)."""
        if isinstance(func, cst.Name):
            return self._bindings.get(func.value, str(func.value))
        if isinstance(func, cst.Attribute):
            head = self._resolved(func.value)
            return f"{head}.{func.attr.value}" if head else ""
        return ""

    def _check_get_args(self, encoder: str, written: str, call: cst.Call) -> None:
        """`get_args(MoeBackend)` declares another namespace's names: the model would accept none
        of the shared Literal's members it seems to promise (and the docs table would list them).
        `written`: the key as the facts read it (`encoder` may be the name a misspelt key means)."""
        entry = self._declared_entry(written)
        if entry is None or entry.kind != "all" or self._members is None or self.index.is_shared_literal(entry.literal):
            return
        given = entry.literal.rpartition(".")[2] or "nothing"
        self.report(
            call, f'encoder "{encoder}": get_args must be given the shared Literal {self._literal}, not {given}'
        )

    def _declared_entry(self, encoder: str) -> DeclEntry | None:
        """The index's reading of the entry (its `get_args` argument resolved through imports)."""
        if self._class is None:
            return None
        name = self._class.name.value
        named = [c for c in self.context.facts.classes if c.name == name]
        if len(named) > 1:  # two module-level classes of one name: told apart by line (a position pass)
            line = self.position(self._class.name).start.line
            named = [c for c in named if c.line == line]
        found = named[0] if named else None
        return found.declaration.entry(encoder) if found is not None and found.declaration is not None else None

    def _check_backends(self, encoder: str, value: cst.Tuple | cst.List | cst.Set) -> None:
        seen: set[str] = set()
        listed = set(_strings(element.value for element in value.elements))  # grows with each fix's name
        for element in value.elements:
            string = element.value
            # `"TRT" "LLM"` is one string literal to Python (red-team 47: "must be string literals")
            name = string.evaluated_value if isinstance(string, cst.SimpleString | cst.ConcatenatedString) else None
            if not isinstance(name, str):
                self.report(string, f'encoder "{encoder}": backend names must be string literals')
                continue
            duplicate = name in seen
            if duplicate:
                self.report(string, f'encoder "{encoder}": backend "{name}" is listed twice')
            seen.add(name)
            if self._members is not None and name not in self._members:
                parts = _joined_parts(string)
                if any(part.upper() in self._members for part in parts):
                    joined = " ".join(f'"{part}"' for part in parts)
                    self.report(
                        string,
                        f'encoder "{encoder}": {joined} are joined by Python into "{name}", which is not a member '
                        f"of {self._literal}; is a comma missing between them?",
                    )
                    continue
                member, certain = _likely_member(name, self._members)
                self.report(
                    string, f'encoder "{encoder}": "{name}" is not a member of {self._literal}{did_you_mean(member)}'
                )
                # A wrong case is fixed safely (the member is certain); a typo's nearest member is
                # a guess, offered as an unsafe fix (`--unsafe-fixes`: the user reviews it). A
                # second copy of the name, or of the member another fix writes, gets none.
                if not duplicate and isinstance(string, cst.SimpleString):  # the fix rewrites one token
                    self._attach_replacement(
                        name, member, Applicability.SAFE if certain else Applicability.UNSAFE, listed
                    )

    def _attach_replacement(
        self, name: str, replacement: str | None, applicability: Applicability, taken: set[str]
    ) -> None:
        """The last finding gets a fix that rewrites its string literal to `replacement`, unless
        `taken` (the names there are, and those other fixes write) holds it; then `taken` does."""
        if replacement is None or not replacement.isidentifier():
            return  # the transform writes the body as it is: only names that need no escaping
        if would_duplicate(replacement, frozenset(taken)):
            return
        taken.add(replacement)
        finding = self.findings[-1]
        description = f'Replace "{name}" with "{replacement}"'
        fix = Fix("replace-string", applicability, description, finding.span.start, (replacement,))
        self.findings[-1] = dataclasses.replace(finding, fix=fix)

    def _check_reason(self, encoder: str, call: cst.Call) -> None:
        unpacked = next((arg for arg in call.args if arg.star), None)
        if unpacked is not None:
            code = _code(unpacked).rstrip(", ")
            self.report(
                unpacked,
                f'encoder "{encoder}": pass {self._marker} its reason as one string, not unpacked arguments ({code})',
            )
        elif len(call.args) > 1:
            self.report(
                call.args[1], f'encoder "{encoder}": {self._marker} takes one reason, not {len(call.args)} arguments'
            )
        else:
            # What the facts (and so the docs table) know of it statically: parsed once, never run.
            known, value = _static(call.args[0].value) if call.args else (True, None)
            if known and (value is None or (isinstance(value, str) and not value.strip())):
                self.report(
                    call,
                    f'encoder "{encoder}" is declared {self._marker} without a reason; '
                    "say why its attention cannot be changed",
                )
            elif known and not isinstance(value, str):  # a name, a call or an f-string may be one at run time
                reason = _code(call.args[0].value)
                self.report(
                    call.args[0], f'encoder "{encoder}": the reason of {self._marker} must be a string, not {reason}'
                )


def _bindings(facts: ModuleFacts) -> dict[str, str]:
    """Local name -> dotted name; the module's own defs shadow its imports, as in the facts."""
    defs = [(c.name, c.qualname) for c in facts.classes] + [(f.name, f.qualname) for f in facts.functions]
    return {**dict(facts.imports), **dict(defs)}


def _static(node: cst.BaseExpression) -> tuple[bool, object]:
    """The facts' reading of `node` (`static_value`), so DL104 and the docs table agree on what is
    known statically: the expression's source is parsed, never run."""
    try:
        tree = ast.parse(f"({_code(node)})", mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return False, None
    return static_value(tree.body)


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _likely_member(name: str, members: tuple[str, ...]) -> tuple[str | None, bool]:
    """(the member `name` most likely means, or None; whether it is certain: only the case differs)."""
    exact_case = next((member for member in members if member.upper() == name.upper()), None)
    if exact_case is not None:
        return exact_case, True
    return closest(name.upper(), members), False


def _strings(nodes: Iterable[cst.BaseExpression]) -> frozenset[str]:
    """The values of the plain string literals among `nodes`."""
    return frozenset(
        n.evaluated_value for n in nodes if isinstance(n, cst.SimpleString) and isinstance(n.evaluated_value, str)
    )


def would_duplicate(replacement: str | None, listed: frozenset[str]) -> bool:
    """Would rewriting a name to `replacement` list it twice? Then no fix is offered: the fixed
    text would be refused (its re-lint reports the duplicate), though it was counted fixable."""
    return replacement is not None and replacement in listed


def _unwrap_tuple_call(value: cst.BaseExpression) -> cst.BaseExpression:
    """`tuple(get_args(...))` is the call it wraps, as the facts read it (`declint.facts`)."""
    if (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value in ("tuple", "list")
        and len(value.args) == 1
        and value.args[0].keyword is None
        and not value.args[0].star
        and isinstance(value.args[0].value, cst.Call)
    ):
        return value.args[0].value
    return value


def _joined_parts(string: cst.BaseExpression) -> list[str]:
    """The values of the literals an implicit concatenation joins (`"TRTLLM" "FLASHINFER"`, a
    comma missing at a line break); empty for one literal or a part that is no plain string."""
    if not isinstance(string, cst.ConcatenatedString):
        return []
    parts: list[str] = []
    for side in (string.left, string.right):
        if isinstance(side, cst.ConcatenatedString):
            parts += _joined_parts(side)
        elif isinstance(side, cst.SimpleString) and isinstance(side.evaluated_value, str):
            parts.append(side.evaluated_value)
        else:
            return []
    return parts
