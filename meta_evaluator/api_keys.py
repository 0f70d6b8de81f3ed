"""API keys: which values may name a key's environment variable, and reading the key from it.

Judges and the embedding scorer take `api_key_env`, the NAME of the variable holding a key. That
name is saved in `main_state.json` and in YAML files that users commit, so a value that looks
like a key is refused: what is not a plausible variable name (`^[A-Za-z_][A-Za-z0-9_]{0,63}$`),
what starts like a provider's key (`gsk_`, `hf_`, `AKIA` ...), and what does not read as words
(a run of hex, or of base62 cut into short humps with few English letter pairs or vowels; see
`_random_looking`). A key read from the variable is refused when it carries white
space, control or non-ASCII characters (pasted from a web page), before any request is sent.

No message here ever repeats a refused value, nor any part of a key: they name the variable,
the kind of problem and at most a position. `redact_keys` hides what starts like a provider's
key in any text quoted in a message (a key pasted where a judge or a label belongs).
"""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qsl, urlsplit

__all__ = [
    "HIDDEN",
    "MAX_NAME_LENGTH",
    "SECRET_NAME",
    "check_endpoint_url",
    "check_key_variable",
    "dotenv_hint",
    "looks_like_key",
    "read_api_key",
    "redact_keys",
    "refuse_keys",
]

MAX_NAME_LENGTH = 64
"""The longest name accepted for a key's variable (longer values are keys, not names)."""

_NAME = re.compile(rf"[A-Za-z_][A-Za-z0-9_]{{0,{MAX_NAME_LENGTH - 1}}}")

# Lower-case prefixes of providers' keys, written with '_' (those with '-', like `sk-`, `xai-`,
# `glpat-`, are no variable names anyway): Groq, Hugging Face, Fireworks, Stripe/ElevenLabs,
# GitHub, Replicate. A value with one of them is a key when the rest is long or looks random,
# so that `hf_token` stays a name.
SECRET_NAME = re.compile(r"auth|key|token|secret|password|cookie|signature|sig$", re.IGNORECASE)
"""Header or query names that carry credentials (`Authorization`, `x-api-key`, `access_token`):
those belong in an environment variable, never in a config file."""

_KEY_PREFIXES = (
    "gsk_", "hf_", "fw_", "sk_", "pk_", "rk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
    "github_pat_", "r8_", "xoxb_", "xoxp_",
)  # fmt: skip
# Keys with a fixed, upper-case shape: AWS access key ids, Google API keys.
_KEY_SHAPES = re.compile(r"(AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}|AIza[\w-]{35}")

# What `_random_looking` cuts a part into: upper-case runs (`AI` in `OpenAIKey`), capitalised
# or lower-case words, digit runs.
_HUMPS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_HEX_RUN = re.compile(r"[0-9a-fA-F]{16,}")
_HEX_PIECE = re.compile(r"[0-9a-fA-F]+")
# The 50 most frequent letter pairs of English text (about half of all its pairs; 7% of the
# pairs of random letters), and those of `key`, `api` and `token`.
_PAIRS = (
    "th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le "
)
_PAIRS += "ve co me de hi ri ro ic ne ea ra ce li ch ll be ma si om ur ke ey ap pi ok"
_COMMON_PAIRS = frozenset(_PAIRS.split(" "))

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
        # The parts one by one, and joined: a key cut by '_' into short pieces is still a key.
        if any(_random_looking(part, after_prefix=True) for part in [*rest, "".join(rest)]):
            return "the value given starts like a provider's key"
    parts = name.split("_")
    # Hex pieces joined: a UUID written with '_' (`a9caf3cc_6086_...`) is one run of hex.
    hex_pieces = "".join(part for part in parts if _HEX_PIECE.fullmatch(part))
    if any(_random_looking(part) for part in [*parts, hex_pieces]):
        return "the value given looks like a random key, not a name"
    return None


def _random_looking(part: str, *, after_prefix: bool = False) -> bool:
    """Whether one `_`-separated part of a value reads as a run of a random alphabet.

    A name's parts are words: `AzureOpenAIKeyEastUS2` is Azure|Open|AI|Key|East|US|2 when cut
    into camelCase humps (a capitalised or lower-case word, an upper-case acronym, a digit run).
    A key's parts are drawn letter by letter from hex or base62, so they cut into many humps of
    one or two characters, hold few of the letter pairs English words are made of and few
    vowels. Having a digit, or both cases, says nothing (`Gpt4oMiniEvalKey2024v2` is a name;
    `xQmPvLrTkWnZbYcJdHsFgA` is not). So a part is random when:

    - it holds a run of 16+ hex digits with both a digit and a letter (Azure keys, hashes);
      no word is spelt with a-f alone, so a name never does;
    - or it has 16+ characters (8+ after a key's prefix, where any 24+ are a key) and any of:
      more than 60% of its humps are one or two characters long (names: at most about 45%,
      the acronyms, versions and digit runs; base62: about 80%); fewer than one common
      English letter pair (`_COMMON_PAIRS`, inside a word hump) per 6 characters (names: one
      per 2 to 5, base62: one per 30); or fewer than 30% vowels (`aeiouy`) among its letters
      (names: 35-65%, random letters: 23%).

    The three rules see different things, so a random run has to pass all three by chance to
    be taken for a name: about 1 in 10,000 base62 runs of 20-64 characters do, mostly of
    20-25 characters (`uq66tyrip8eomeGUZNYar7e`). Parts under 16 characters are left alone
    (`GPT4`, `EASTUS2`, `hf`), and a mostly-acronym camelCase name (`myKeyV2ForGPT4oEU`) can
    be refused: write it with `_`.
    """
    if after_prefix and len(part) >= 24:
        return True
    for run in _HEX_RUN.findall(part):
        if not run.isdigit() and not run.isalpha():
            return True
    if len(part) < (8 if after_prefix else 16):
        return False
    humps = _HUMPS.findall(part)
    if sum(len(hump) <= 2 for hump in humps) > 0.6 * len(humps):
        return True
    # Upper-case runs inside a mixed-case part are acronyms (or random), not spelt words.
    one_case = part in (part.upper(), part.lower())
    words = [h.lower() for h in humps if h.isalpha() and (one_case or not h.isupper())]
    pairs = sum(word[i : i + 2] in _COMMON_PAIRS for word in words for i in range(len(word) - 1))
    if pairs < len(part) / 6:
        return True
    letters = [c for c in part.lower() if c.isalpha()]
    return sum(c in "aeiouy" for c in letters) < 0.3 * len(letters)


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
            + dotenv_hint()
        )
    problem = _key_problem(value)
    if problem is not None:
        raise ValueError(
            f"the key in variable {variable} {problem}; set the variable to the key alone "
            "(a key copied from a web page or a file often brings a line break or a space)"
        )
    return value


def dotenv_hint() -> str:
    """What to do with a `.env` file in the working folder, which nothing here reads; or ''."""
    if not os.path.isfile(".env"):
        return ""
    return (
        " (a .env file is in the working folder, but meta-evaluator does not read it: export "
        "its variables in the shell, `set -a; . ./.env; set +a`, or in Python install "
        "python-dotenv and call `dotenv.load_dotenv()` first, as meta-evaluator 0.3.3's "
        "tutorial did)"
    )


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


def looks_like_key(text: str) -> bool:
    """Whether `text` holds a run that starts like a provider's key (what `redact_keys` hides)."""
    return _KEY_IN_TEXT.search(text) is not None


def check_endpoint_url(url: str) -> str:
    """Return `url` when it is an http(s) URL with a host and no credential in it.

    A base URL is saved in `main_state.json` and YAML files that users commit, so a user name,
    password, credential query parameter or anything shaped like a provider's key in it is
    refused. The URL is never echoed: it may hold the very credential being refused.

    Raises:
        ValueError: The URL is not http(s) with a host, or carries a credential.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or re.search(r"\s", url):
        raise ValueError("base_url must be an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise ValueError(
            "base_url holds a user name or password, which would be saved in the project "
            "folder; put the key in an environment variable and name it in api_key_env"
        )
    secret = [k for k, _ in parse_qsl(parts.query) if SECRET_NAME.search(k)]
    if secret:
        raise ValueError(
            f"base_url's query parameter(s) {sorted(secret)} carry credentials, which would be "
            "saved in the project folder; put the key in an environment variable and name it "
            "in api_key_env"
        )
    if looks_like_key(url):
        raise ValueError(
            "base_url holds something shaped like an API key, which would be saved in the "
            "project folder; put the key in an environment variable and name it in api_key_env"
        )
    return url


def refuse_keys(value: str, field: str) -> str:
    """`value`, unless it holds something shaped like a provider's key (never echoed).

    For fields saved in the project folder or shown by status (ids, models, prompts, headers).

    Raises:
        ValueError: `value` holds a key; the message names `field`, never the value.
    """
    if looks_like_key(value):
        raise ValueError(
            f"{field} holds something shaped like an API key, which would be saved in the "
            "project folder and shown in every status line; put the key in an environment "
            "variable and name it in api_key_env"
        )
    return value
