"""Names that are variable names, values that are keys, and keys with stray characters.

Shared by the tests of `meta_evaluator.api_keys` and of every place that takes an
`api_key_env`. The fake keys have the shapes of real ones (prefix, length, alphabet) and are
random.
"""

from __future__ import annotations

import random
import re
import string

# Variable names people give their keys: providers' defaults, with a region, a model, a
# version or a date, in UPPER_SNAKE, lower_snake and camelCase.
ACCEPTED = [
    "OPENAI_API_KEY",
    "OPENAI_API_KEY_PROD2",
    "OPENAI_API_KEY_20241101",
    "OPENAI_KEY_GPT4O",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY_2",
    "AZURE_OPENAI_KEY_EASTUS2",
    "ANTHROPIC_API_KEY",
    "GROQ_API_KEY",
    "FIREWORKS_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "TOGETHER_API_KEY",
    "OPENROUTER_API_KEY",
    "COHERE_API_KEY",
    "PERPLEXITY_API_KEY",
    "NVIDIA_NIM_API_KEY",
    "REPLICATE_API_TOKEN",
    "VLLM_API_KEY",
    "OLLAMA_KEY",
    "HF_TOKEN",
    "hf_token",
    "hf_prod_token",
    "hf_prod2024key",
    "gsk_team_key",
    "HUGGINGFACE_HUB_TOKEN",
    "GITHUB_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "CLAUDE_3_5_SONNET_KEY",
    "LLAMA3_70B_KEY",
    "QWEN2_5_72B_API_KEY",
    "TEXT_EMBEDDING_3_SMALL_KEY",
    "PROD_EU_WEST_1_OPENAI_KEY",
    "MY_PROJECT_TOKEN_V2",
    "MY_PROJECT_2024_OPENAI_KEY",
    "LLM_KEY",
    "key_2024_11",
    "my_key",
    "_PRIVATE_KEY",
    "key",
    "K",
    "KEY1",
    "apiKey",
    "openaiKey",
    "AzureOpenAIKeyEastUS2",
    "AzureOpenAIKeySwedenCentral",
    "myOpenAIKeyForProductionUse2",
    "myOpenAIKeyForProdUSEast",
    "Gpt4oMiniEvalKey2024v2",
    "OpenAiKeyForTheEvaluationProject",
    "OpenAIKeyForGPT4Turbo",
    "DeepSeekR1DistillKey",
    "Llama3x70bInstructKey",
    "anthropicClaude35SonnetKey",
    "Claude3OpusEvalKey",
    "AZUREOPENAIAPIKEY",
    "openaiapikeyproduction",
    "AZURE_OPENAI_API_KEY_FOR_THE_EVALUATION_OF_THE_JUDGES_PROD_EU_V2",  # 64 characters
    "OPENAI_API_KEY_2024_11_25",
    "ADD_FACE_2024_KEY",
    "hf_token_2024",
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
    # keys cut into short pieces by '_': joined after the prefix, joined hex pieces
    "huggingface_pieces": "hf_TG16Msi_5njI6Uc_Xu05NZR_6J18VSn_ltBIkdT",
    "groq_pieces": "gsk_3QpqXe_R9CZBJ_Xu05NZR_6J18VSn",
    "uuid_underscored": "a9caf3cc_6086_ed95_e6b0_cdca2f790d4c",
    "uuid_underscored_upper": "A9CAF3CC_6086_ED95_E6B0_CDCA2F790D4C",
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
    "base52_22": "xQmPvLrTkWnZbYcJdHsFgA",
    "uppercase_hex": "F3A9C1E07B2D4A8F9E6C5B1A0D2F7E4C",
    "uppercase_hex_18": "A9F3A0C7D1B2E4F6A8",
    "uppercase_hex_20": "A9F3A0C7D1B2E4F6A8C0",
    "assignment": "GROQ=gsk_9naHVck6pbd4ZRj2SxphvDTwrzqwo72n",
    "bearer": "Bearer Xq7LmN2pRt8VwZ3kYb6HcJ9dFg4SeA1u",
}

BASE62 = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_NAME_CHARACTERS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Shape = tuple[int, list[str | tuple[str, int]]]
"""How many keys to make, and their parts: a fixed prefix, or (alphabet, length)."""

# Shapes of real keys without a prefix `redact_keys` knows (Azure, Mistral, Cohere, Together).
BARE_SHAPES: dict[str, Shape] = {
    "hex32_lower": (3, [(_HEX, 32)]),  # Azure OpenAI, DeepSeek, AssemblyAI
    "hex32_upper": (2, [(_HEX.upper(), 32)]),
    "hex40": (2, [(_HEX, 40)]),  # wandb, Serper
    "hex64": (1, [(_HEX, 64)]),  # Together
    "hex16_upper": (1, [(_HEX.upper(), 16)]),
    "hex19_upper": (1, [(_HEX.upper(), 19)]),
    "base62_20": (3, [(BASE62, 20)]),
    "base62_32": (3, [(BASE62, 32)]),  # Mistral, DeepInfra
    "base62_40": (2, [(BASE62, 40)]),  # Cohere
    "base62_48": (2, [(BASE62, 48)]),
    "base52_20": (2, [(string.ascii_letters, 20)]),
    "base52_22": (2, [(string.ascii_letters, 22)]),
    "base36_32": (1, [(string.ascii_lowercase + string.digits, 32)]),
    "xoxb_underscored": (
        1,
        ["xoxb_", ("0123456789", 12), "_", ("0123456789", 13), "_", (BASE62, 24)],
    ),
    "databricks": (1, ["dapi", (_HEX, 32)]),
    "langsmith": (1, ["lsv2_pt_", (_HEX, 32), "_", (_HEX, 10)]),
    "npm": (1, ["npm_", (BASE62, 36)]),
}
# Shapes of keys with a prefix that `redact_keys` knows.
PREFIXED_SHAPES: dict[str, Shape] = {
    "groq": (2, ["gsk_", (BASE62, 52)]),
    "hf": (2, ["hf_", (BASE62, 34)]),
    "fireworks": (2, ["fw_", (BASE62, 24)]),
    "aws": (2, ["AKIA", (string.ascii_uppercase + string.digits, 16)]),
    "google": (2, ["AIza", (BASE62 + "_", 35)]),
    "github": (2, ["ghp_", (BASE62, 36)]),
    "github_fine_grained": (1, ["github_pat_", (BASE62, 22), "_", (BASE62, 59)]),
    "replicate": (2, ["r8_", (BASE62, 37)]),
    "stripe": (1, ["sk_live_", (BASE62, 24)]),
}
PREFIXLESS = {
    "azure_hex", "azure_base62", "mistral", "cohere", "base52_without_digits", "base52_22",
    "uppercase_hex", "uppercase_hex_18", "uppercase_hex_20", "uuid_underscored",
    "uuid_underscored_upper",
}  # fmt: skip
"""Ids of `REFUSED` values without a prefix `redact_keys` knows (text may quote them)."""


def _generate() -> dict[str, str]:
    """The shapes filled from a seeded generator; only values spelt like names (not starting
    with a digit), so that each is refused for its look, not its characters (a fine-grained
    GitHub token is longer than 64 characters all the same)."""
    found: dict[str, str] = {}
    for seed, (shape, (count, parts)) in enumerate({**BARE_SHAPES, **PREFIXED_SHAPES}.items()):
        rng = random.Random(seed)
        made = 0
        while made < count:
            value = "".join(
                part if isinstance(part, str) else "".join(rng.choices(part[0], k=part[1]))
                for part in parts
            )
            if _NAME_CHARACTERS.fullmatch(value):
                made += 1
                found[f"{shape}_{made}"] = value
    return found


_GENERATED = _generate()
REFUSED.update(_GENERATED)
PREFIXLESS.update(case for case in _GENERATED if case.rsplit("_", 1)[0] in BARE_SHAPES)

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
