"""Our own async LLM clients over httpx: OpenAI-compatible, Azure OpenAI, Anthropic, and mock."""

from meta_evaluator.llm.anthropic import AnthropicClient
from meta_evaluator.llm.classify import CallFailed, EndpointRejected
from meta_evaluator.llm.limits import EndpointLimits, RateBudget
from meta_evaluator.llm.mock import MockClient
from meta_evaluator.llm.openai import OpenAIClient
from meta_evaluator.llm.prices import Price, Prices, read_prices
from meta_evaluator.llm.spend import Spend
from meta_evaluator.llm.transport import make_transport
from meta_evaluator.llm.types import ChatRequest, ChatResponse, OutputSchema

__all__ = [
    "AnthropicClient",
    "CallFailed",
    "ChatRequest",
    "ChatResponse",
    "EndpointLimits",
    "EndpointRejected",
    "MockClient",
    "OpenAIClient",
    "OutputSchema",
    "Price",
    "Prices",
    "RateBudget",
    "Spend",
    "make_transport",
    "read_prices",
]
