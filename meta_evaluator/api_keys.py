"""API keys: which values may name a key's environment variable, and reading the key from it.

Judges and the embedding scorer take `api_key_env`, the NAME of the variable holding a key. That
name is saved in `main_state.json` and in YAML files that users commit, so a value that looks
like a key is refused: what is not a plausible variable name (`^[A-Za-z_][A-Za-z0-9_]{0,63}$`),
what starts like a provider's key (`gsk_`, `hf_`, `AKIA` ...), and what looks random (a long run
of letters mixed with digits). A key read from the variable is refused when it carries white
space, control or non-ASCII characters (pasted from a web page), before any request is sent.

No message here ever repeats a refused value, nor any part of a key: they name the variable,
the kind of problem and at most a position. `redact_keys` hides what starts like a provider's
key in any text quoted in a message (a key pasted where a judge or a label belongs).
"""

from __future__ import annotations

import os
import re

__all__ = ["HIDDEN", "MAX_NAME_LENGTH", "check_key_variable", "read_api_key", "redact_keys"]

MAX_NAME_LENGTH = 64
"""The longest name accepted for a key's variable (longer values are keys, not names)."""

_NAME = re.compile(rf"[A-Za-z_][A-Za-z0-9_]{{0,{MAX_NAME_LENGTH - 1}}}")

# Lower-case prefixes of providers' keys, written with '_' (those with '-', like `sk-`, `xai-`,
# `glpat-`, are no variable names anyway): Groq, Hugging Face, Fireworks, Stripe/ElevenLabs,
# GitHub, Replicate. A value with one of them is a key when the rest is long or looks random,
# so that `hf_token` stays a name.
_KEY_PREFIXES = (
    "gsk_", "hf_", "fw_", "sk_", "pk_", "rk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
    "github_pat_", "r8_", "xoxb_", "xoxp_",
)  # fmt: skip
# Keys with a fixed, upper-case shape: AWS access key ids, Google API keys.
_KEY_SHAPES = re.compile(r"(AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}|AIza[\w-]{35}")

# A provider's key inside any text: its prefix, then a long run of its alphabet (or a bearer
# token, as in an Authorization header); `...` and a tail are taken along, as `reprlib` cuts
# long strings in the middle.
_KEY_IN_TEXT = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"(?:sk-(?:ant-|proj-|svcacct-)?|gsk_|hf_|fw_|xai-|gh[pousr]_|github_pat_|glpat-|r8_|pplx-"
    r"|nvapi-|csk-|[spr]k_(?:live|test)_|xox[abpr]-)[A-Za-z0-9_-]{16,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"
    r"|AIza[A-Za-z0-9_-]{35}"
    r"|(?:Bearer|Basic)\s+[A-Za-z0-9._~+/-]{16,}=*"
    r")(?:\.\.\.[A-Za-z0-9_-]*)?"
)
HIDDEN = "<hidden: looks like an API key>"
"""What `redact_keys` puts in place of a key."""

_NAMED = {"\n": "a newline", "\r": "a carriage return", " ": "a space", "\t": "a tab"}


def check_key_variable(name: object) -> str:
    """Return `name` when it is plausibly the name of an environment variable holding a key.

    Args:
        name: The value given as `api_key_env`.

    Returns:
        `name`, unchanged.

    Raises:
        ValueError: `name` is not a string, not a variable name, or looks like a key itself;
            the message says which, without repeating the value.
    """
    problem = _name_problem(name)
    if problem is None:
        assert isinstance(name, str)
        return name
    raise ValueError(
        f"api_key_env must be the NAME of an environment variable (like OPENAI_API_KEY), not the "
        f"key itself; {problem}. Put the key in an environment variable and give that "
        "variable's name (if a real key was written in a file, revoke it with its provider)"
    )


def _name_problem(name: object) -> str | None:
    if not isinstance(name, str):
        return f"got {type(name).__name__} instead of a string"
    if len(name) > MAX_NAME_LENGTH:
        return f"the value given is longer than {MAX_NAME_LENGTH} characters"
    if not _NAME.fullmatch(name):
        return (
            "the value given is not a variable name (letters, digits and '_' only, not "
            "starting with a digit)"
        )
    if _KEY_SHAPES.fullmatch(name):
        return "the value given has the shape of a provider's key"
    for prefix in _KEY_PREFIXES:
        rest = name[len(prefix) :].split("_") if name.startswith(prefix) else []
        if any(_random_looking(part, after_prefix=True) for part in rest):
            return "the value given starts like a provider's key"
    if any(_random_looking(part) for part in name.split("_")):
        return "the value given looks like a random key, not a name"
    return None


def _random_looking(part: str, *, after_prefix: bool = False) -> bool:
    """Whether one `_`-separated part of a value looks like a run of a random alphabet.

    Names are words joined by '_' (`AZURE_OPENAI_API_KEY_2`, `OpenAiKey`); keys are long runs
    of hex or base62 characters. After a known key prefix, shorter runs count as random.
    """
    digits = sum(c.isdigit() for c in part)
    lower = sum(c.islower() for c in part)
    upper = sum(c.isupper() for c in part)
    mixed = (digits > 0 and lower + upper > 0) or (lower > 0 and upper > 0)
    if after_prefix:
        return len(part) >= 24 or (len(part) >= 8 and mixed)
    if len(part) >= 20 and digits and lower + upper:
        return True
    if len(part) >= 16 and digits and lower and upper:
        return True
    # Random base52 has as many upper as lower case letters; camelCase about one in six.
    return len(part) >= 28 and min(lower, upper) >= 0.3 * len(part)


def read_api_key(variable: str) -> str:
    """The key held by the environment variable `variable`, checked for stray characters.

    Args:
        variable: The variable's name (checked with `check_key_variable` beforehand).

    Returns:
        The key, exactly as set.

    Raises:
        ValueError: The variable is not set or empty, or its value starts or ends with white
            space, or holds white space, control or non-ASCII characters. The message names
            the variable and the problem (with a 1-based position), never the value.
    """
    value = os.environ.get(variable)
    if not value:
        raise ValueError(
            f"variable {variable} is not set; export it, or name another variable in api_key_env"
        )
    problem = _key_problem(value)
    if problem is not None:
        raise ValueError(
            f"the key in variable {variable} {problem}; set the variable to the key alone "
            "(a key copied from a web page or a file often brings a line break or a space)"
        )
    return value


def _key_problem(value: str) -> str | None:
    """What is wrong with a key's characters (`ends with a newline`), or None; never the key."""
    for where, char in (("ends", value[-1]), ("starts", value[0])):
        if char.isspace():
            return f"{where} with {_describe(char)}"
    for position, char in enumerate(value, start=1):
        if char.isspace():
            return f"contains {_describe(char)} at position {position}"
        if not char.isascii():
            return f"contains a non-ASCII character at position {position}"
        if ord(char) < 32 or ord(char) == 127:
            return f"contains a control character at position {position}"
    return None


def _describe(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    return "a non-ASCII space" if not char.isascii() else "a control character"


def redact_keys(text: str) -> str:
    """`text` with every run that starts like a provider's key (`sk-...`, `gsk_...`) hidden.

    For messages quoting a user's value: a key pasted in the wrong place (a judge entry, a
    label) is not repeated. Ids and labels without such a prefix are left as they are.

    Example:
        >>> redact_keys("got 'gsk_9naHVck6pbd4ZRj2Sxphv'")
        "got '<hidden: looks like an API key>'"
    """
    return _KEY_IN_TEXT.sub(HIDDEN, text)
