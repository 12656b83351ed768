"""Chat templates: a conversation rendered with the model's Jinja template, then tokenized.

The rendering is transformers' ``apply_chat_template``, step for step: the template runs in
Jinja2's ``ImmutableSandboxedEnvironment`` with ``trim_blocks`` and ``lstrip_blocks``, the
``loopcontrols`` extension (``{% break %}``, ``{% continue %}``) and a ``{% generation %}``
block (rendered as its body), a ``tojson`` filter that does not escape HTML and keeps non-ASCII
characters, the globals ``raise_exception``, ``strftime_now``, a ``dict`` constructor and a
``namespace`` that refuses underscore-prefixed attributes. Before rendering, keys whose value
is None are dropped from each message, everything the template sees is rebuilt from plain
JSON types, and a message's ``thinking`` / ``reasoning`` is also given as
``reasoning_content`` (and ``reasoning_content`` as ``thinking``). The template also sees the
special tokens map (``eos_token``...) and every extra keyword (``enable_thinking=False``).
Tokenizing the rendered text matches special tokens in it, as HF tokenizers does.

Where the template comes from: a ``chat_template=`` argument; else the vocabulary's own,
:attr:`Vocab.chat_template <wordsplit.vocab.Vocab>`, which the loaders fill from the file
(the ``chat_template`` of a ``tokenizer_config.json`` beside a tokenizer.json or vocab.json, or
fetched with an ``hf:`` repo; a GGUF's ``tokenizer.chat_template``); else, for the registered
``qwen3`` only, the template bundled with wordsplit (Qwen3's ``tokenizer_config.json``'s). A
vocabulary with none raises :class:`~wordsplit.errors.ChatTemplateError`. Not here: converting
Python functions into tool schemas (pass JSON schemas), assistant-token masks, choosing among
named templates (the loaders keep the one named ``default``). Jinja2 is an optional
dependency: ``pip install 'wordsplit[chat]'``.

>>> from wordsplit import get_tokenizer
>>> tok = get_tokenizer("qwen3")
>>> tok.apply_chat_template([{"role": "user", "content": "Hi!"}], tokenize=False, add_generation_prompt=True)
'<|im_start|>user\\nHi!<|im_end|>\\n<|im_start|>assistant\\n'
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping
from datetime import datetime
from importlib import resources
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from .errors import ChatTemplateError, MissingDependencyError

if TYPE_CHECKING:
    from .tokenizer import Tokenizer
    from .vocab import Vocab

#: Oldest Jinja2 accepted: older versions have known sandbox escapes (transformers' floor too).
MIN_JINJA2 = (3, 1, 6)

# The names a message's reasoning comes under; templates read the first (transformers' list).
_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")

# Appended to the final message for continue_final_message, then cut off the rendered text.
_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "

Message = Mapping[str, Any]
Conversation = Sequence[Message]


# -- where templates come from ----------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def bundled_chat_data(name: str) -> Optional[dict]:
    """The chat template bundled for a vocabulary name and its special tokens map, or None.

    >>> bundled_chat_data("qwen3")["special_tokens_map"]
    {'eos_token': '<|im_end|>', 'pad_token': '<|endoftext|>'}
    """
    path = resources.files("wordsplit.vocabs").joinpath("data", f"{name}.chat.json")
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def chat_template_of(vocab: "Vocab") -> str:
    """The chat template of ``vocab``: its own, else the one bundled for its name (only
    ``qwen3`` has one).

    Raises:
        ChatTemplateError: it has neither.

    >>> from wordsplit import load_vocab
    >>> chat_template_of(load_vocab("qwen3")).startswith("{%- if tools %}")
    True
    """
    template = getattr(vocab, "chat_template", None)
    if template is None:
        data = bundled_chat_data(vocab.name)
        template = data and data["chat_template"]
    if template is None:
        raise ChatTemplateError(
            f"the vocabulary {vocab.name!r} has no chat template; pass chat_template='...' (the "
            "'chat_template' of the model's tokenizer_config.json), load the tokenizer file with its "
            "tokenizer_config.json beside it (hf:ORG/REPO fetches both), or build the Vocab with chat_template=..."
        )
    return template


def special_tokens_map(vocab: "Vocab") -> dict[str, str]:
    """What transformers gives a template as ``eos_token``, ``bos_token``, ...: the bundled map
    for a bundled template, else the vocabulary's eos/bos literals.

    >>> from wordsplit import load_vocab
    >>> special_tokens_map(load_vocab("cl100k_base"))
    {'eos_token': '<|endoftext|>'}
    """
    data = bundled_chat_data(vocab.name)
    if getattr(vocab, "chat_template", None) is None and data is not None:
        return dict(data["special_tokens_map"])
    literals = {i: text for text, i in reversed(list(vocab.all_special_literals.items()))}
    result = {}
    for key, value in (("bos_token", vocab.bos_token_id), ("eos_token", vocab.eos_token_id)):
        if value is not None and value in literals:
            result[key] = literals[value]
    return result


# -- the Jinja environment ----------------------------------------------------------------------


def _jinja2():
    try:
        import jinja2
    except ImportError:
        raise MissingDependencyError(
            "chat templates need Jinja2; install it with: pip install 'wordsplit[chat]'"
        ) from None
    version = tuple(int(part) for part in jinja2.__version__.split(".")[:3] if part.isdigit())
    if version < MIN_JINJA2:
        raise MissingDependencyError(
            f"chat templates need Jinja2 >= {'.'.join(map(str, MIN_JINJA2))} (older ones have sandbox "
            f"escapes, and templates are untrusted code); found {jinja2.__version__}: "
            "pip install -U 'wordsplit[chat]'"
        )
    return jinja2


@functools.lru_cache(maxsize=32)
def compile_chat_template(template: str):
    """The compiled Jinja template, in transformers' sandboxed environment (cached).

    Raises:
        MissingDependencyError: Jinja2 is not installed (or too old).
        ChatTemplateError: the template does not compile.

    >>> template = compile_chat_template("{{ messages | length }}{% for m in messages %}{% break %}{% endfor %}")
    >>> template.render(messages=[1])
    '1'
    """
    jinja2 = _jinja2()
    from jinja2.ext import Extension, loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class GenerationBlock(Extension):
        """``{% generation %}...{% endgeneration %}`` marks assistant text for transformers'
        token masks; rendering it is rendering its body."""

        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

        def _render(self, caller):
            return caller()

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        # Jinja's own tojson escapes <, >, & and ' for HTML; templates expect plain JSON.
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.now().strftime(format)

    class TemplateDict:
        """``dict(...)`` for templates, without the class itself (no attribute tricks)."""

        def __call__(self, *args, **kwargs):
            return dict(*args, **kwargs)

        def fromkeys(self, *args, **kwargs):
            return dict.fromkeys(*args, **kwargs)

    class TemplateNamespace(jinja2.utils.Namespace):
        """``namespace(...)`` that refuses underscore-prefixed names (no CPython internals)."""

        def __init__(*args, **kwargs):
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                TemplateNamespace._check_name(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name, value):
            TemplateNamespace._check_name(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check_name(name):
            if isinstance(name, str) and name.startswith("_"):
                raise jinja2.exceptions.SecurityError(
                    f"chat templates cannot store underscore-prefixed attributes on a namespace, got {name!r}"
                )

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationBlock, loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals["dict"] = TemplateDict()
    env.globals["namespace"] = TemplateNamespace
    try:
        return env.from_string(template)
    except jinja2.exceptions.TemplateError as exc:
        raise ChatTemplateError(f"the chat template does not compile: {exc}") from exc


# -- rendering ----------------------------------------------------------------------------------


def plain_data(value: Any) -> Any:
    """``value`` rebuilt from plain JSON types (str, int, float, bool, None, dict, list, tuple),
    so the sandboxed template sees no object with methods of its own; dataclasses and pydantic
    models become dicts, numpy scalars numbers, anything else a ``"<TypeName>"`` placeholder.

    >>> plain_data({"a": (1, 2.5), "b": object})
    {'a': (1, 2.5), 'b': '<type>'}
    """
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):  # subclasses (enums...) carry extra methods
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {plain_data(key): plain_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_data(item) for item in value]
    if isinstance(value, tuple):
        return tuple(plain_data(item) for item in value)
    if type(value).__module__ == "numpy" and callable(getattr(value, "item", None)):
        return plain_data(value.item())  # a numpy scalar (np.bool_(False) must stay falsy)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: plain_data(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if callable(getattr(value, "model_dump", None)):  # pydantic
        return plain_data(value.model_dump())
    return f"<{type(value).__name__}>"


def _alias_reasoning(chat: list[dict]) -> list[dict]:
    out = []
    for message in chat:
        reasoning = next((message[key] for key in _REASONING_FIELDS if message.get(key) is not None), None)
        if reasoning is not None:
            message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        out.append(message)
    return out


def render_chat(
    template: str,
    conversation: Conversation,
    /,
    *,
    tools: Optional[Sequence[Mapping]] = None,
    documents: Optional[Sequence[Mapping]] = None,
    add_generation_prompt: bool = False,
    continue_final_message: Union[bool, str] = False,
    **template_kwargs: Any,
) -> str:
    """Render one conversation with ``template`` as transformers does (see the module docstring).

    Args:
        template: the Jinja chat template.
        conversation: the messages, dicts with ``role`` and ``content`` (and ``tool_calls``,
            ``reasoning_content``... as the template reads them).
        tools: JSON schemas of the tools the model may call.
        documents: documents for retrieval-augmented templates.
        add_generation_prompt: end with the header of an assistant turn.
        continue_final_message: end inside the final message (True: its ``content``; a str:
            that field), so the model continues it.
        template_kwargs: more variables for the template (``enable_thinking=False``...).

    Raises:
        ChatTemplateError: an empty conversation, a message that is not a dict, a tool that
            is not a dict, or the template failed (``raise_exception``, a sandbox violation...).

    >>> render_chat("{% for m in messages %}{{ m.role }}: {{ m.content }}\\n{% endfor %}",
    ...             [{"role": "user", "content": "hi", "name": None}])
    'user: hi\\n'
    """
    jinja2 = _jinja2()
    if not conversation:
        raise ChatTemplateError("cannot apply a chat template to an empty conversation; give at least one message")
    if continue_final_message and add_generation_prompt:
        raise ChatTemplateError(
            "continue_final_message and add_generation_prompt exclude each other: continue the final message, "
            "or start a new assistant turn"
        )
    for message in conversation:
        if not isinstance(message, Mapping):
            raise ChatTemplateError(f"chat messages are dicts with 'role' and 'content', got {message!r}")
    if tools is not None:
        for tool in tools:
            if not isinstance(tool, Mapping):
                raise ChatTemplateError(
                    f"tools are JSON schemas (dicts), got {tool!r}; wordsplit does not derive schemas from "
                    "Python functions (transformers.utils.get_json_schema does)"
                )
    # Keys set to None are dropped: APIs return content=None or tool_calls=None, which
    # templates would render as "None" (transformers does the same).
    chat = plain_data([{key: value for key, value in message.items() if value is not None} for message in conversation])
    chat = _alias_reasoning(chat)
    final_message = None
    if continue_final_message:
        field = continue_final_message if isinstance(continue_final_message, str) else "content"
        final_message = chat[-1].get(field)
        if not isinstance(final_message, str):
            raise ChatTemplateError(
                f"continue_final_message is set but the final message has no {field!r} text to continue"
            )
        if field in _REASONING_FIELDS:
            fields = [f for f in _REASONING_FIELDS if chat[-1].get(f) == final_message]
        else:
            fields = [field]
        if not any(f in template for f in fields):
            raise ChatTemplateError(
                f"continue_final_message is set to {field!r}, which the chat template does not read"
            )
        for f in fields:
            chat[-1][f] = chat[-1][f] + _CONTINUE_TAG
    compiled = compile_chat_template(template)
    try:
        text = compiled.render(
            messages=chat, tools=plain_data(tools), documents=plain_data(documents),
            add_generation_prompt=add_generation_prompt, **plain_data(template_kwargs),
        )
    except jinja2.exceptions.TemplateError as exc:
        raise ChatTemplateError(f"the chat template failed: {exc}") from exc
    if final_message is not None:
        if final_message.strip() not in text or _CONTINUE_TAG.strip() not in text:
            raise ChatTemplateError(
                "continue_final_message is set but the chat template dropped part of the final message"
            )
        at = text.rindex(_CONTINUE_TAG.strip())
        # Cut at the tag; if the template trimmed the space after it, trim the text before it too.
        text = text[:at] if text[at:at + len(_CONTINUE_TAG)] == _CONTINUE_TAG else text[:at].rstrip()
    return text


def apply_chat_template(
    tokenizer: "Tokenizer",
    conversation: Union[Conversation, Sequence[Conversation]],
    /,
    *,
    tools: Optional[Sequence[Mapping]] = None,
    add_generation_prompt: bool = False,
    tokenize: bool = True,
    chat_template: Optional[str] = None,
    **template_kwargs: Any,
):
    """Render ``conversation`` (or a list of conversations) with the vocabulary's chat
    template and, with ``tokenize=True``, encode it with special tokens matched; see
    :meth:`wordsplit.Tokenizer.apply_chat_template`."""
    template = chat_template if chat_template is not None else chat_template_of(tokenizer.vocab)
    batched = bool(conversation) and not isinstance(conversation[0], Mapping) and isinstance(conversation[0], Sequence)
    kwargs = {**special_tokens_map(tokenizer.vocab), **template_kwargs}
    texts = [
        render_chat(template, chat, tools=tools, add_generation_prompt=add_generation_prompt, **kwargs)
        for chat in (conversation if batched else [conversation])
    ]
    if tokenize:
        # HF tokenizes the rendered text with every special token matched.
        results = tokenizer.encode_batch(texts, allowed_special="all") if batched else [
            tokenizer.encode(texts[0], allowed_special="all")]
    else:
        results = texts
    return results if batched else results[0]
