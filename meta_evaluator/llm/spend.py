"""A run's cost ceiling: what its calls spent, what is in flight, and whether one more may start.

One `Spend` is shared by every judge of a run (one event loop, so no lock: each method runs
without awaiting between its reads and writes). Before each call (each retry too) the caller
reserves the call's estimate; when the call ends it settles: the reservation is replaced by
what the call cost (nothing if its request was never handed to the client, e.g. cancelled
while it waited for its rate-limit admission). Amounts are integer picodollars
(`prices.PICO`), so sums are exact.

The rule: a call starts only if `spent + reserved + estimate <= ceiling`. A call that does not
fit waits while other calls are in flight (they may settle for less than they reserved); when
none is in flight and it still does not fit, the ceiling is reached: that call and every later
one is refused (`CeilingReached`), for every judge of the run.

The estimate is not a worst case: the prompt is counted as characters over four (English
prose; code and non-Latin text take more, Chinese about 4 times as many), and without
`max_tokens` the answer as `DEFAULT_COMPLETION_TOKENS`, which OpenAI-compatible servers do not
enforce. (UTF-8 bytes would bound a BPE prompt, but reserve about four times an English
prompt's tokens, and still miss the tokens a provider adds: chat templates, Anthropic's tool
prompt.)

The bound: at every admission `spent + reserved <= ceiling`, and nothing is admitted after the
last one, so the run's final spend is at most `ceiling + sum(max(0, actual - estimate))` over
the calls in flight at its last admission. When no call costs more than its estimate (the
answer within `max_tokens`, the prompt within its estimate), the run never passes its
ceiling; when none costs more than k times it, the run spends at most k times the ceiling.
Since the ceiling is reached only with nothing in flight, the run stops having spent more than
`ceiling - estimate` of the refused call: no more is left unused than one call.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

from meta_evaluator.llm.classify import CallFailed, EndpointRejected
from meta_evaluator.llm.prices import PICO, Price
from meta_evaluator.llm.types import ChatRequest, ChatResponse

__all__ = ["DEFAULT_COMPLETION_TOKENS", "CeilingReached", "JudgeSpend", "Spend", "reserved_tokens"]

logger = logging.getLogger(__name__)

DEFAULT_COMPLETION_TOKENS = 1024
"""Completion tokens a call is assumed to use when its judge sets no `max_tokens` (Anthropic's
default in our client; OpenAI-compatible servers may answer longer: set `max_tokens` for a
bound the server enforces)."""


def reserved_tokens(request: ChatRequest) -> tuple[int, int]:
    """A call's estimated (prompt, completion) tokens, as the ceiling reserves them.

    The prompt's is `request.estimated_prompt_tokens()` (a character count over four: an
    estimate, not a bound); the completion's is `max_tokens`, or `DEFAULT_COMPLETION_TOKENS`.
    """
    return request.estimated_prompt_tokens(), request.max_tokens or DEFAULT_COMPLETION_TOKENS


class CeilingReached(Exception):
    """A call may not start: the run's spend plus its estimate would pass the ceiling."""


class Spend:
    """Spent and reserved picodollars of one run, against its ceiling (`max_cost`)."""

    def __init__(self, max_cost: float) -> None:
        self.ceiling = round(max_cost * PICO)
        """The ceiling in picodollars."""
        self.spent = 0
        """Picodollars of the calls settled."""
        self.reserved = 0
        """Picodollars reserved by the calls in flight."""
        self.in_flight = 0
        """Calls reserved and not yet settled."""
        self.reached = False
        """Whether the ceiling was reached: no call starts any more."""
        self.by_judge: dict[str, int] = {}
        """Picodollars settled, by judge id."""
        self._settled: anyio.Event | None = None

    @property
    def max_cost(self) -> float:
        """The ceiling in US dollars."""
        return self.ceiling / PICO

    @property
    def spent_usd(self) -> float:
        """What the settled calls cost, in US dollars."""
        return self.spent / PICO

    def judge_usd(self, judge_id: str) -> float:
        """What the settled calls of one judge cost, in US dollars."""
        return self.by_judge.get(judge_id, 0) / PICO

    def past_it(self, otherwise: str) -> str:
        """How a stop at the ceiling reads: "which has passed it" past it, else `otherwise`.

        Spent passes the ceiling when calls cost more than their estimates reserved.
        """
        if self.spent > self.ceiling:
            return "which has passed it (the calls cost more than estimated)"
        return otherwise

    def try_reserve(self, units: int) -> bool:
        """Reserve `units` if they fit under the ceiling now (a few tenths of a microsecond)."""
        if not self.reached and self.spent + self.reserved + units <= self.ceiling:
            self.reserved += units
            self.in_flight += 1
            return True
        return False

    async def reserve(self, units: int) -> None:
        """Reserve `units`, waiting while calls in flight may free room.

        Raises:
            CeilingReached: The ceiling was reached: they do not fit with no call in flight
                (or an earlier call found so).
        """
        while not self.try_reserve(units):
            if self.reached or self.in_flight == 0:
                if not self.reached:  # said at once: the run's error comes when all are done
                    logger.warning(
                        "cost ceiling reached: spent $%.4f of max_cost $%.4f, %s; no new call "
                        "starts",
                        self.spent / PICO,
                        self.max_cost,
                        self.past_it(f"and the next call may cost up to ${units / PICO:.4f}"),
                    )
                self.reached = True
                self._wake()  # the others waiting learn it at once
                raise CeilingReached
            if self._settled is None:
                self._settled = anyio.Event()
            await self._settled.wait()

    def settle(self, reserved: int, actual: int, judge_id: str) -> None:
        """End a call that reserved `reserved`: it cost `actual` picodollars."""
        self.reserved -= reserved
        self.in_flight -= 1
        self.spent += actual
        self.by_judge[judge_id] = self.by_judge.get(judge_id, 0) + actual
        self._wake()

    def _wake(self) -> None:
        if self._settled is not None:
            self._settled.set()
            self._settled = None


@dataclass(frozen=True)
class JudgeSpend:
    """One judge's way into its run's `Spend`: the estimate and the cost of its calls."""

    spend: Spend
    price: Price
    judge_id: str

    async def reserve(self, request: ChatRequest) -> tuple[int, int, int]:
        """Reserve a call's estimate; return it as (prompt tokens, completion tokens, units).

        Raises:
            CeilingReached: The run reached its ceiling: the call must not start.
        """
        prompt, completion = reserved_tokens(request)
        units = self.price.units(prompt, completion)
        if not self.spend.try_reserve(units):
            await self.spend.reserve(units)
        return prompt, completion, units

    async def call(
        self,
        request: ChatRequest,
        attempt: Callable[[Callable[[], None]], Awaitable[ChatResponse]],
    ) -> ChatResponse:
        """Make one call within the ceiling: reserve, `attempt(sending)`, settle.

        `attempt` sends `request` and must call `sending()` right before it hands the request to
        the client: a call that ends before that (cancelled while it waits for its rate-limit
        admission) was never sent and costs nothing.

        Raises:
            CeilingReached: The run reached its ceiling; `attempt` was not called.
        """
        reserved = await self.reserve(request)
        sent = False

        def sending() -> None:
            nonlocal sent
            sent = True

        try:
            answer = await attempt(sending)
        except BaseException as exc:  # a failure or a cancellation: settled, then raised on
            self.settle(reserved, None, exc, sent=sent)
            raise
        self.settle(reserved, answer)
        return answer

    def settle(
        self,
        reserved: tuple[int, int, int],
        response: ChatResponse | None,
        failure: BaseException | None = None,
        *,
        sent: bool = True,
    ) -> None:
        """Settle a call reserved as `reserved`, by its answer or its failure.

        An answer costs its reported tokens (a count the server left out: the estimate's). A
        call never `sent` (its request not handed to the client) costs nothing; nor does a
        failure the server answered with an HTTP error status or one that made no connection
        (providers bill neither); any other failure of a sent call (a timeout, a lost
        connection, an unreadable 2xx body, a cancellation in flight) may have been billed and
        costs the whole estimate.
        """
        prompt, completion, units = reserved
        if response is not None:
            actual = self.price.units(
                response.prompt_tokens if response.prompt_tokens is not None else prompt,
                response.completion_tokens
                if response.completion_tokens is not None
                else completion,
            )
        elif (
            not sent
            or isinstance(failure, EndpointRejected)
            or (
                isinstance(failure, CallFailed)
                and (failure.http_status is not None or failure.unreachable is not None)
            )
        ):
            actual = 0
        else:
            actual = units
        self.spend.settle(units, actual, self.judge_id)
