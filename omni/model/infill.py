"""Fill in the middle: a code model writes what goes between a file's prefix and its suffix.

Code models are trained on it (Qwen2.5-Coder, StarCoder, DeepSeek-Coder, CodeLlama, CodeGemma): the model sees the
code on both sides of a hole, below it too, and writes the code most natural there, with no instruction to follow.
Verified repair uses it as a source of candidates (omni/repair/infilled.py: cloze-style repair, as AlphaRepair does
with a masked model).

The request is the completions endpoint of the OpenAI-compatible API (`/v1/completions`, which llama.cpp's server,
vLLM, Ollama and LM Studio serve) with the model family's own sentinel tokens in the prompt. Which family a model is
comes from its name; an endpoint is probed once with a fill whose answer is plain (`Infill.probed`), and a model
whose family is unknown, or an endpoint that does not answer the probe right, gets no infilling.
"""

from __future__ import annotations

from dataclasses import dataclass

from omni.errors import ContextLengthExceeded, ModelError
from omni.model.transport import Transport
from omni.results import Usage

MAX_PREFIX = 3000  # characters of the file before the hole (about 800 tokens): the definition and some context
MAX_SUFFIX = 1000  # characters after it (the definition's, no further)


@dataclass(frozen=True)
class Format:
    """How one model family writes a fill-in-the-middle prompt, and what ends its middle."""
    prefix: str
    suffix: str
    middle: str
    stop: tuple[str, ...]

    def prompt(self, before: str, after: str) -> str:
        return f"{self.prefix}{before}{self.suffix}{after}{self.middle}"


QWEN = Format("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>",
              ("<|endoftext|>", "<|fim_pad|>", "<|file_sep|>", "<|im_end|>", "<|fim_prefix|>"))
STARCODER = Format("<fim_prefix>", "<fim_suffix>", "<fim_middle>", ("<|endoftext|>", "<file_sep>", "<fim_prefix>"))
DEEPSEEK = Format("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>", ("<｜end▁of▁sentence｜>", "<|EOT|>"))
CODELLAMA = Format("<PRE> ", " <SUF>", " <MID>", ("<EOT>", "</s>"))
CODEGEMMA = Format("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", ("<|file_separator|>", "<eos>"))

FAMILIES = (  # a model name's words -> its format; the first that matches
    (("qwen2.5-coder", "qwen-2.5-coder", "qwen2.5coder", "qwen3-coder", "codeqwen"), QWEN),
    (("starcoder", "santacoder", "granite-code", "granite-3b-code", "granite-8b-code"), STARCODER),
    (("deepseek-coder",), DEEPSEEK),
    (("codellama", "code-llama"), CODELLAMA),
    (("codegemma",), CODEGEMMA),
)


def format_for(model: str) -> Format | None:
    """The fill-in-the-middle format of a model by its name (`qwen2.5-coder:7b`, `Qwen/Qwen2.5-Coder-1.5B-Instruct`,
    a GGUF file name); None for a family not known to be trained on it."""
    name = model.lower().replace("_", "-").replace(" ", "-")
    return next((fmt for words, fmt in FAMILIES if any(w in name for w in words)), None)


@dataclass(frozen=True)
class Masked:
    """A file with a hole: the text before it and after it, and where a definition around it begins and ends.
    prefix and suffix are whole lines: the hole is lines first..last (1-based, inclusive; last = first - 1 for a
    gap before line first, where lines may be added)."""
    prefix: str
    suffix: str
    head: str  # the definition's text before the hole
    tail: str  # and after it
    first: int
    last: int

    @classmethod
    def of(cls, text: str, first: int, last: int, start: int, end: int) -> Masked:
        """text with lines first..last cut out, in the definition of lines start..end."""
        lines = text.splitlines(keepends=True)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        before, after = "".join(lines[:first - 1]), "".join(lines[last:])
        return cls(prefix=before, suffix=after, head="".join(lines[start - 1:first - 1]),
                   tail="".join(lines[last:end]), first=first, last=last)

    def definition(self, middle: str) -> str:
        """The definition with middle in the hole."""
        return self.head + _lines(middle) + self.tail


def _lines(middle: str) -> str:
    """A middle as whole lines: a newline at its end, none for an empty one."""
    return middle if not middle or middle.endswith("\n") else middle + "\n"


class Infill:
    """Fills through one endpoint's completions, in one model family's format: `ChatModel.infill()` makes it once
    the endpoint has answered the probe."""

    def __init__(self, transport: Transport, fmt: Format):
        self.transport, self.format = transport, fmt

    @classmethod
    def probed(cls, transport: Transport) -> Infill | None:
        """An Infill for the transport's model when its family is known and the endpoint fills a plain hole
        right (the body of a two-line function whose call says what it does); else None."""
        fmt = format_for(transport.config.model)
        if fmt is None:
            return None
        infill = cls(transport, fmt)
        hole = Masked.of("def add(a, b):\n    return a - b\n\n\nassert add(2, 3) == 5\n", 2, 2, 1, 2)
        try:
            fills, _ = infill.fill(hole, 0, one_line=True)
        except (ModelError, ContextLengthExceeded):
            return None
        return infill if fills and "+" in fills[0] and "<" not in fills[0] else None

    def fill(self, hole: Masked, samples: int, temperature: float = 0.8, one_line: bool = False,
             max_tokens: int | None = None) -> tuple[list[str], Usage]:
        """The greedy middle, then `samples` sampled ones (one request with n; one by one where the server takes
        n = 1 only), and the usage of all; one_line: the middle is part of one line (the fill stops at the line's
        end), else it is cut to whole lines."""
        prompt = self.format.prompt(_from_line(hole.prefix, MAX_PREFIX), hole.suffix[:MAX_SUFFIX])
        cap = max_tokens or (48 if one_line else 40 * max(2, hole.last - hole.first + 2))
        stop = list(self.format.stop) + (["\n"] if one_line else [])
        fill = self.transport.fill
        replies = fill(prompt, 1, 0.0, cap, stop)
        if samples:
            try:
                replies += fill(prompt, samples, temperature, cap, stop)
            except ModelError as exc:
                if "HTTP 400" not in str(exc) and "HTTP 422" not in str(exc):
                    raise
                for _ in range(samples):
                    replies += fill(prompt, 1, temperature, cap, stop)
        usage = Usage()
        for reply in replies:
            usage.add(reply.usage)
        return [r.text if one_line else _whole_lines(r.text, hole) for r in replies], usage


def _from_line(prefix: str, limit: int) -> str:
    """The last `limit` characters of prefix, from the start of a line."""
    if len(prefix) <= limit:
        return prefix
    cut = prefix[-limit:]
    return cut[cut.find("\n") + 1:] if "\n" in cut else cut


def _whole_lines(text: str, hole: Masked) -> str:
    """A middle as the lines it writes, up to a line that the suffix's first code lines hold (a model that goes on
    to write the code after the hole again), each line ended."""
    following = set(list(dict.fromkeys(line.strip() for line in hole.suffix.splitlines() if line.strip()))[:3])
    kept = []
    for line in text.splitlines(keepends=True):
        if line.strip() in following:
            break
        kept.append(line if line.endswith("\n") else line + "\n")
    return "".join(kept)
