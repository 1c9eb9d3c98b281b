"""DL105 metadata-contract."""

from __future__ import annotations

import re
from typing import ClassVar

from declint.facts import ClassFacts, ModuleFacts
from declint.members import METADATA_PARAMETERS, MetadataRead
from declint.rule import FactRule, FileContext, Invalid, Valid
from declint.types import Finding, Position, Span

_METADATA_NAME = re.compile(r"\b(\w*Metadata)\b")
_HEAD = (
    "from dataclasses import dataclass\n"
    "from tensorrt_llm._torch.attention_backend.interface import AttentionBackend, AttentionMetadata\n\n"
)
_TRTLLM_METADATA = (
    "@dataclass\nclass TrtllmAttentionMetadata(AttentionMetadata):\n"
    "    workspace: object = None\n\n"
    "    def __post_init__(self):\n        self.kv_lens_cuda = None\n\n"
    "    def prepare(self):\n        self.max_seq_len = 0\n\n"
)
_FLASHINFER_METADATA = (
    '@dataclass\nclass FlashInferAttentionMetadata(AttentionMetadata):\n    kv_layout: str = "NHD"\n\n'
    "    def plan(self):\n        pass\n\n"
)


class MetadataContract(FactRule):
    """A backend reads a metadata attribute its paired metadata class does not provide.

    Each attention backend names its metadata class twice: as the type argument of the generic
    base (`class XAttention(AttentionBackend[XMetadata])`) and as `Metadata = XMetadata`. The
    engine builds the metadata object from `Metadata`, and the backend's forward reads it. A read
    of an attribute the metadata class does not provide fails with a bare `AttributeError` at the
    first fused-attention call, not at load time: the real failure was
    `'TrtllmAttentionMetadata' object has no attribute 'kv_layout'` raised from the FlashInfer
    backend.

    Provided: annotated fields, class attributes, methods and properties over the bases inside
    the project, and every `self.X = ...`, `setattr(self, "X", ...)`,
    `object.__setattr__(self, "X", ...)` (a frozen dataclass) or `super().__setattr__("X", ...)`
    in its methods (`__post_init__`, `prepare`; `self` positional-only too), a `setattr` over a
    loop of names (`for name in ("a", "b"): setattr(self, name, None)`, or over a module-level
    tuple of them); a `setattr` whose name is
    only known at run time may set anything, as a `__getattr__` may answer anything. Read: `metadata.X` / `attn_metadata.X` in `forward*` methods, and `p.X` for a
    parameter annotated with a metadata class, including methods a backend inherits while pairing
    another metadata class; `metadata.X += 1` reads X too. An inherited `forward*` is checked
    against the subclass's metadata class whatever its parameter's annotation says
    (`metadata: FlashInferAttentionMetadata`, or the ancestor's own class under another name): the
    engine passes it the object the subclass's `Metadata` builds, and what that class inherits from
    the annotated one counts as provided. A generic intermediate backend
    (`class PagedBase(AttentionBackend[TMetadata])` with no `Metadata` of its own) is checked in the
    subclasses that bind its type, not against the interface's default `Metadata`; its reads
    annotated with a concrete metadata class are still checked. Guarded reads are fine:
    `getattr(metadata, "X", default)`, reads in the body of a `try` with an `except AttributeError`
    (by that name, or in a tuple; not a bare `except` or `except Exception`, which catch whatever
    else fails there too, nor a handler that raises again on every path; a lambda or function
    defined there may run later, unguarded) or of a `with suppress(AttributeError)`
    (`contextlib.suppress`, by any path or import alias; not `suppress(Exception)`), and reads where
    `hasattr(metadata, "X")` or an `isinstance` check is known to hold: in the body of
    `if hasattr(...)`, in the `else` of `if not isinstance(...)`, in a `case` of `match metadata`
    with a class pattern (`case FlashInferAttentionMetadata():`; of `match q, metadata`, one at its
    place: `case (_, FlashInferAttentionMetadata()):`) or a guard that checks it, and after
    `if not hasattr(metadata, "X"): return` (or raise, break, continue) in the same block, or after
    a `match metadata` whose cases that do not leave so all narrow it and that has a case matching
    anything (`case FlashInferAttentionMetadata(): pass`, then `case _: return`). The
    body of a negated check, or of an `or` whose other side may be the true one, is not guarded.
    Nor is a read after `assert hasattr(metadata, "X")`: the class still lacks X, and the first
    forward fails on the assert instead (an `AssertionError`, or under `python -O` the read's own
    `AttributeError`). A check proves something of the object the name holds: rebinding the name
    (`metadata = other`, an annotated or augmented assignment, a tuple or list target, a `for` or
    `with ... as` target, a walrus `(metadata := other)`) ends the narrowing for the reads after
    it, until the name is checked again (`isinstance(metadata := other, X)` checks the new
    object). The rebinding counts where it runs on every path that goes on (after an early exit,
    in its `else`, in both branches of an `if`, in a `try` whose handlers leave); one that may not
    run (in one branch, a loop body, a `try` whose handler goes on, the body of a `with`, a later
    operand of `and`/`or`) keeps the guard: a missed finding rather than an invented one. The two
    pairings disagreeing is itself a finding. When a base class is outside the project,
    nothing is reported for that class, nor for a metadata class that defines `__getattr__` or
    `__getattribute__` (its own or a base's): it may answer any attribute. One on the metadata
    base itself (`metadata-base`, which every metadata class shares) does not count.
    """

    CODE = "DL105"
    NAME = "metadata-contract"
    SUMMARY = "a backend reads metadata.X that its paired metadata class does not provide"
    OPTIONS = ("metadata-base", "backend-base")

    VALID: ClassVar = (
        Valid(
            _HEAD + _TRTLLM_METADATA + "class TrtllmAttention(AttentionBackend[TrtllmAttentionMetadata]):\n"
            "    Metadata = TrtllmAttentionMetadata\n\n"
            "    def forward(self, q, metadata):\n"
            "        metadata.prepare()\n"
            "        return (metadata.kv_lens_cuda, metadata.max_seq_len, metadata.workspace,\n"
            "                metadata.num_tokens, metadata.max_num_tokens)\n",
            path="tensorrt_llm/_torch/attention_backend/trtllm.py",
        ),
        Valid(
            _HEAD + _TRTLLM_METADATA + "class TrtllmAttention(AttentionBackend[TrtllmAttentionMetadata]):\n"
            "    Metadata = TrtllmAttentionMetadata\n\n"
            "    def forward(self, q, attn_metadata):\n"
            '        layout = getattr(attn_metadata, "kv_layout", "NHD")\n'
            '        if hasattr(attn_metadata, "page_size") and attn_metadata.page_size > 1:\n'
            "            return attn_metadata.page_size\n"
            "        return layout\n",
            path="tensorrt_llm/_torch/attention_backend/trtllm.py",
        ),
        Valid(
            _HEAD + "@dataclass(frozen=True)\nclass FrozenMetadata(AttentionMetadata):\n"
            "    def __post_init__(self):\n"
            '        object.__setattr__(self, "kv_layout", "NHD")\n\n'
            "class FrozenAttention(AttentionBackend[FrozenMetadata]):\n"
            "    Metadata = FrozenMetadata\n\n"
            "    def forward(self, q, metadata):\n"
            '        if not hasattr(metadata, "page_size"):\n'
            "            return metadata.kv_layout\n"
            "        return metadata.page_size\n",
            path="tensorrt_llm/_torch/attention_backend/frozen.py",
        ),
        Valid(
            "import builtins\n"
            + _HEAD
            + _TRTLLM_METADATA
            + "class TrtllmAttention(AttentionBackend[TrtllmAttentionMetadata]):\n"
            "    Metadata = TrtllmAttentionMetadata\n\n"
            "    def forward(self, q, metadata):\n"
            "        try:\n"
            "            layout = metadata.kv_layout\n"
            "        except (KeyError, builtins.AttributeError):\n"
            '            layout = "NHD"\n'
            "        try:\n"
            "            sizes = tuple(metadata.page_size for _ in range(2))\n"
            "        except AttributeError:\n"
            "            sizes = ()\n"
            "        return layout, sizes\n",
            path="tensorrt_llm/_torch/attention_backend/trtllm.py",
        ),
    )
    INVALID: ClassVar = (
        Invalid(  # code the try defines runs later, outside it; a handler raising again is no fallback
            _HEAD + _TRTLLM_METADATA + "class TrtllmAttention(AttentionBackend[TrtllmAttentionMetadata]):\n"
            "    Metadata = TrtllmAttentionMetadata\n\n"
            "    def forward(self, q, metadata):\n"
            "        try:\n"
            "            get = lambda: metadata.kv_layout\n"
            "        except AttributeError:\n"
            "            get = None\n"
            "        try:\n"
            "            page = metadata.page_size\n"
            "        except AttributeError as error:\n"
            "            if 'page' in str(error):\n"
            "                raise RuntimeError('version skew') from error\n"
            "            else:\n"
            "                raise\n"
            "        return get, page\n",
            expect=((19, 26), (23, 19)),
            path="tensorrt_llm/_torch/attention_backend/trtllm.py",
        ),
        Invalid(  # a handler for something else, or for everything, is no fallback for the read
            _HEAD + _TRTLLM_METADATA + "class TrtllmAttention(AttentionBackend[TrtllmAttentionMetadata]):\n"
            "    Metadata = TrtllmAttentionMetadata\n\n"
            "    def forward(self, q, metadata):\n"
            "        try:\n"
            "            layout = metadata.kv_layout\n"
            "        except Exception:\n"
            "            layout = metadata.page_layout\n"
            "        return layout\n",
            expect=((19, 21), (21, 21)),
            path="tensorrt_llm/_torch/attention_backend/trtllm.py",
        ),
        Invalid(
            _HEAD
            + _TRTLLM_METADATA
            + _FLASHINFER_METADATA
            + "class FlashInferAttention(AttentionBackend[TrtllmAttentionMetadata]):\n"
            "    Metadata = TrtllmAttentionMetadata\n\n"
            "    def forward_impl(self, q, metadata):\n"
            "        return metadata.kv_layout\n",
            expect=((25, 15),),
            message=(
                "FlashInferAttention.forward_impl reads metadata.kv_layout, which its metadata class "
                "TrtllmAttentionMetadata does not provide (AttributeError at the first forward); kv_layout "
                "is provided by FlashInferAttentionMetadata, not by TrtllmAttentionMetadata"
            ),
            path="tensorrt_llm/_torch/attention_backend/flashinfer.py",
        ),
        Invalid(
            _HEAD + _FLASHINFER_METADATA + "class FlashInferAttention(AttentionBackend[FlashInferAttentionMetadata]):\n"
            "    Metadata = AttentionMetadata\n",
            expect=((11, 6),),
            message=(
                "FlashInferAttention pairs two metadata classes: AttentionBackend[FlashInferAttentionMetadata] "
                "but Metadata = AttentionMetadata; the engine builds Metadata, the type says otherwise"
            ),
            path="tensorrt_llm/_torch/attention_backend/flashinfer.py",
        ),
        Invalid(  # the engine passes the subclass's Metadata, whatever the inherited annotation says
            _HEAD + _FLASHINFER_METADATA + "class FlashInferAttention(AttentionBackend[FlashInferAttentionMetadata]):\n"
            "    Metadata = FlashInferAttentionMetadata\n\n"
            "    def forward(self, q, metadata: FlashInferAttentionMetadata):\n"
            "        metadata.plan()\n"
            "        return metadata.kv_layout\n\n"
            "class StarAttention(FlashInferAttention):\n"
            "    Metadata = AttentionMetadata\n",
            expect=((18, 6), (18, 6)),
            message=(
                "StarAttention inherits FlashInferAttention.forward, which reads metadata.kv_layout; its "
                "metadata class AttentionMetadata does not provide it (AttributeError at the first forward); "
                "kv_layout is provided by FlashInferAttentionMetadata"
            ),
            path="tensorrt_llm/_torch/attention_backend/flashinfer.py",
        ),
        Invalid(
            _HEAD + _TRTLLM_METADATA + "class TrtllmAttention(AttentionBackend[TrtllmAttentionMetadata]):\n"
            "    Metadata = TrtllmAttentionMetadata\n\n"
            "    def plan(self, md: TrtllmAttentionMetadata):\n"
            "        return md.page_size\n",
            expect=((18, 15),),
            message=(
                "TrtllmAttention.plan reads md.page_size, which its metadata class TrtllmAttentionMetadata "
                "does not provide (AttributeError at the first forward); no metadata class provides page_size"
            ),
            path="tensorrt_llm/_torch/attention_backend/trtllm.py",
        ),
        Invalid(
            _HEAD + _FLASHINFER_METADATA + "class AnyAttention(AttentionBackend[AttentionMetadata]):\n"
            "    Metadata = AttentionMetadata\n\n"
            "    def forward(self, q, metadata):\n"
            "        if not isinstance(metadata, FlashInferAttentionMetadata):\n"
            "            return metadata.kv_layout\n"
            "        return q\n",
            expect=((16, 19),),
            message=(
                "AnyAttention.forward reads metadata.kv_layout, which its metadata class AttentionMetadata does not "
                "provide (AttributeError at the first forward); kv_layout is provided by FlashInferAttentionMetadata, "
                "not by AttentionMetadata"
            ),
            path="tensorrt_llm/_torch/attention_backend/any.py",
        ),
    )

    def check_facts(self, context: FileContext) -> list[Finding]:
        findings: list[Finding] = []
        for cls in context.facts.classes:
            facts = context.index.classes.get(cls.qualname)
            if facts == cls and context.index.is_backend(cls):
                findings += self._check_backend(context, cls)
        return findings

    def _check_backend(self, context: FileContext, cls: ClassFacts) -> list[Finding]:
        index = context.index
        type_arg, attribute = index.metadata_pairing(cls)  # both inherited when not the class's own
        findings = []
        # Only a class that binds the generic type itself can contradict its own Metadata.
        own_type_arg = index.backend_type_arg(cls)
        if own_type_arg and attribute and own_type_arg != attribute:
            findings.append(
                self._at_class(
                    context,
                    cls,
                    (
                        f"{cls.name} pairs two metadata classes: {index.backend_base}[{_short(own_type_arg)}] but "
                        f"Metadata = {_short(attribute)}; the engine builds Metadata, the type says otherwise"
                    ),
                )
            )
        if index.passes_metadata_type_on(cls):
            # Its metadata type is open: the subclasses that bind it are checked with what they inherit.
            return findings + self._own_reads(context, cls, None)
        metadata = index.classes.get(attribute or type_arg or "")
        provided = index.provided(metadata) if metadata else None
        if metadata is None or provided is None:
            return findings
        return findings + self._own_reads(context, cls, metadata) + self._inherited(context, cls, metadata, provided)

    def _own_reads(self, context: FileContext, cls: ClassFacts, paired: ClassFacts | None) -> list[Finding]:
        findings = []
        for read in cls.metadata_reads:
            target = self._target_of(context, read, paired)
            if target is not None and read.attribute not in (context.index.provided(target) or {read.attribute}):
                findings.append(self._at_read(context, cls, read, target))
        return findings

    def _target_of(self, context: FileContext, read: MetadataRead, paired: ClassFacts | None) -> ClassFacts | None:
        """The metadata class a read is checked against, or None when the read is not in scope."""
        annotated = _annotated_class(context, context.facts, read)
        if annotated is not None:
            return annotated
        if _is_typevar(read) or (read.method.startswith("forward") and read.parameter in METADATA_PARAMETERS):
            return paired
        return None

    def _inherited(
        self, context: FileContext, cls: ClassFacts, metadata: ClassFacts, provided: frozenset[str]
    ) -> list[Finding]:
        findings = []
        overridden = set(cls.methods)
        for _, ancestor in context.index.ancestors(cls):
            if ancestor is None:
                continue
            for read in ancestor.metadata_reads:
                if read.method in overridden or not _gets_the_engines_metadata(context, ancestor, read):
                    continue
                if read.attribute not in provided:
                    providers = _providers(context, read.attribute, metadata)
                    findings.append(
                        self._at_class(
                            context,
                            cls,
                            (
                                f"{cls.name} inherits {ancestor.name}.{read.method}, which reads "
                                f"{read.parameter}.{read.attribute}; its metadata class {metadata.name} does not provide "
                                f"it (AttributeError at the first forward); {providers}"
                            ),
                        )
                    )
            overridden.update(ancestor.methods)
        return findings

    def _at_read(self, context: FileContext, cls: ClassFacts, read: MetadataRead, target: ClassFacts) -> Finding:
        span = Span(Position(read.line, read.column), Position(read.end_line, read.end_column))
        providers = _providers(context, read.attribute, target)
        message = (
            f"{cls.name}.{read.method} reads {read.parameter}.{read.attribute}, which its metadata class "
            f"{target.name} does not provide (AttributeError at the first forward); {providers}"
        )
        if "provided by" in providers:
            message += f", not by {target.name}"
        return self.finding(type(self), context, span, message, f"{cls.name}.{read.method}")

    def _at_class(self, context: FileContext, cls: ClassFacts, message: str) -> Finding:
        position = Position(cls.line, cls.name_column)
        return self.finding(type(self), context, Span(position, position), message, cls.name)


def _gets_the_engines_metadata(context: FileContext, ancestor: ClassFacts, read: MetadataRead) -> bool:
    """Is the read's parameter the one an inherited `forward*` is passed the metadata object in:
    named so, typed with the type variable, or annotated with the ancestor's own metadata class?
    Whatever the annotation says, that object is built from the subclass's `Metadata` (red-team:
    an annotated one was skipped); an annotation the subclass's class derives from adds nothing,
    its members are among the subclass's already."""
    if not read.method.startswith("forward"):
        return False
    if read.parameter in METADATA_PARAMETERS or _is_typevar(read):
        return True
    index = context.index
    module = index.modules.get(ancestor.qualname.rpartition(".")[0])
    annotated = _annotated_class(context, module, read) if module is not None else None
    own = {index.resolve(name) for name in index.metadata_pairing(ancestor) if name}
    return annotated is not None and annotated.qualname in own


def _annotated_class(context: FileContext, module: ModuleFacts, read: MetadataRead) -> ClassFacts | None:
    """The metadata class the read's parameter is annotated with, as `module` names it."""
    named = _METADATA_NAME.search(read.annotation)
    if named is None:
        return None
    annotated = context.index.class_facts(_resolve_in(module, named.group(1)))
    return annotated if annotated is not None and context.index.is_metadata_class(annotated) else None


def _providers(context: FileContext, attribute: str, lacking: ClassFacts) -> str:
    names = [name for name in context.index.providers(attribute) if name != lacking.name]
    if not names:
        return f"no metadata class provides {attribute}"
    return f"{attribute} is provided by {', '.join(names)}"


def _short(qualname: str) -> str:
    return qualname.rpartition(".")[2]


def _is_typevar(read: MetadataRead) -> bool:
    return read.annotation.endswith("TMetadata")


def _resolve_in(module: ModuleFacts, annotation: str) -> str:
    head, _, rest = annotation.strip("'\"").partition(".")
    imports = dict(module.imports)
    local = {c.name: c.qualname for c in module.classes}
    base = imports.get(head) or local.get(head) or head
    return f"{base}.{rest}" if rest else base
