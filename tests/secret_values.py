"""Names that are variable names, values that are keys, and keys with stray characters.

Shared by the tests of `meta_evaluator.api_keys` and of every place that takes an
`api_key_env`. The fake keys have the shapes of real ones (prefix, length, alphabet) and are
random.
"""

from __future__ import annotations

ACCEPTED = [
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY_2",
    "AZURE_OPENAI_KEY_EASTUS2",
    "ANTHROPIC_API_KEY",
    "GROQ_API_KEY",
    "FIREWORKS_API_KEY",
    "HF_TOKEN",
    "hf_token",
    "GITHUB_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "GOOGLE_API_KEY",
    "MY_PROJECT_2024_OPENAI_KEY",
    "OpenAiKeyForTheEvaluationProject",
    "myOpenAIKeyForProdUSEast",
    "my_key",
    "_PRIVATE_KEY",
    "key",
    "K",
    "KEY1",
    "A" * 64,
]

# id -> a value that is a key, not a variable's name. None of them may ever be echoed.
REFUSED = {
    "openai": "sk-proj-Xq7LmN2pRt8VwZ3kYb6HcJ9dFg4SeA1uT0oPiUyTrEwQ",
    "openai_legacy": "sk-Xq7LmN2pRt8VwZ3kYb6HcJ9dFg4SeA1uT0oPiUyTrEwQaS",
    "anthropic": "sk-ant-api03-Xq7LmN2pRt8VwZ3kYb6HcJ9dFg4SeA1uT0oPiUyTrEwQ",
    "groq": "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",
    "huggingface": "hf_xCKu7SPCzX3ZeF981bmiIlN8YS2UbsHFj4",
    "huggingface_lower": "hf_xckusprczxzefbmiilnysubshfjqwert",
    "fireworks": "fw_2g5hzdeDU16Jsz7GolI8Gwfp",
    "stripe": "sk_live_ttk0Ouy5Ev3CYeW61YrEjhRF",
    "github": "ghp_yya1q79VfsecC5d8qk0FKE3FcGdE1fK9DoXW",
    "github_fine_grained": "github_pat_11ABCDEFG0abcdefghijkl_"
    "mnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123",
    "gitlab": "glpat-Xq7LmN2pRt8VwZ3kYb6H",
    "replicate": "r8_LCSUqRfNadvWP1yBwdN7TtMCtJ0bZB535ya5Q",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "google": "AIzaTKDHfn2okWJGzQgSzRvu533Cql73r5Aht4S",
    "xai": "xai-Xq7LmN2pRt8VwZ3kYb6HcJ9dFg4SeA1uT0oPiUyTrEwQ",
    "perplexity": "pplx-Xq7LmN2pRt8VwZ3kYb6HcJ9dFg4SeA1u",
    "nvidia": "nvapi-Xq7LmN2pRt8VwZ3kYb6HcJ9dFg4SeA1u",
    "azure_hex": "abc0487faa7afa0b7a153ca4a3aaef3c",
    "azure_base62": "Y7LagY2jTPD1kPmLIJNWuxzoJPHOhHUDLk1TRX6vD3MKQ9Abrv"
    "iWrwldD6SLYngePqnVReY4UCIk44oukN34",
    "mistral": "dxAoAV4kxWKjGlEE6DDMkBeBr7CVpQ8b",
    "cohere": "Cvz5PkcQLaNRDCbvC4DMYqyDZCzSOGWhkQ9uC6Ev",
    "base52_without_digits": "dxAoAVkxWKjGlEEDDMkBeBrCVpQbTrHs",
    "uppercase_hex": "F3A9C1E07B2D4A8F9E6C5B1A0D2F7E4C",
    "assignment": "GROQ=gsk_9naHVck6pbd4ZRj2SxphvDTwrzqwo72n",
    "bearer": "Bearer Xq7LmN2pRt8VwZ3kYb6HcJ9dFg4SeA1u",
}

# Not names either, but harmless to repeat (no key in them); refused all the same.
NOT_NAMES = ["", "OPENAI_API_KEY\n", " OPENAI_API_KEY", "my-key", "2FAST", "A" * 65, "KEY\u00e9"]


def fragments(value: str, size: int = 6) -> set[str]:
    """Every substring of `value` of `size` characters (the whole value when shorter)."""
    if len(value) <= size:
        return {value}
    return {value[i : i + size] for i in range(len(value) - size + 1)}


def assert_not_echoed(value: str, *texts: object) -> None:
    for text in map(str, texts):
        leaked = sorted(f for f in fragments(value) if f in text)
        assert not leaked, f"fragments {leaked} of the refused value are echoed in {text!r}"


# What a key copied from a web page or a file may carry, and what the message must say.
BAD_KEYS = [
    ("sk-Xq7LmN2pRt8VwZ3kYb6H\n", "ends with a newline"),
    ("sk-Xq7LmN2pRt8VwZ3kYb6H\r\n", "ends with a newline"),
    ("sk-Xq7LmN2pRt8VwZ3kYb6H ", "ends with a space"),
    ("sk-Xq7LmN2pRt8VwZ3kYb6H\t", "ends with a tab"),
    (" sk-Xq7LmN2pRt8VwZ3kYb6H", "starts with a space"),
    ("\nsk-Xq7LmN2pRt8VwZ3kYb6H", "starts with a newline"),
    ("sk-Xq7LmN2pRt 8VwZ3kYb6H", "contains a space at position 14"),
    ("sk-Xq7LmN2pRt\n8VwZ3kYb6H", "contains a newline at position 14"),
    ("sk-Xq7LmN2pRt\u00e98VwZ3kYb6H", "contains a non-ASCII character at position 14"),
    ("sk-Xq7LmN2pRt\u200b8VwZ3kYb6H", "contains a non-ASCII character at position 14"),
    ("sk-Xq7LmN2pRt\u00a0", "ends with a non-ASCII space"),
    ("sk-Xq7LmN2pRt\x078VwZ3kYb6H", "contains a control character at position 14"),
    ("sk-Xq7LmN2pRt\x7f8VwZ3kYb6H", "contains a control character at position 14"),
]
