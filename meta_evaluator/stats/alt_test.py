"""The alternative annotator test (alt-test): may an LLM judge replace a human annotator?

For each human annotator j, leave j out and ask, instance by instance, whether the LLM's label
represents the remaining humans at least as well as j's own label does; a one-sided t-test per
annotator and Benjamini-Yekutieli over annotators give the winning rate, and the LLM passes when
it wins against at least half of the annotators. Exactly METRICS.md section C.

Reference: Calderon, Reichart & Dror, "The Alternative Annotator Test for LLM-as-a-Judge"
(ACL 2025), arXiv:2501.10970.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, TypedDict, Unpack

import numpy as np
import numpy.typing as npt
import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.bootstrap import percentile_interval, weight_chunks
from meta_evaluator.stats.checks import check_choice, check_interval, encode_labels, is_missing
from meta_evaluator.stats.text import text_similarity

__all__ = [
    "EPSILON_GRID",
    "AltTestOptions",
    "AltTestResult",
    "AnnotatorOutcome",
    "ScoringFunction",
    "advantage_interval",
    "advantage_under_weights",
    "alt_test",
    "alt_test_table",
    "benjamini_yekutieli",
    "choose_scoring_function",
    "epsilon_key",
    "one_sided_ttest",
]

ScoringFunction = Literal["accuracy", "neg_rmse", "jaccard", "text_similarity"]
SCORING_FUNCTIONS = ("accuracy", "neg_rmse", "jaccard", "text_similarity")
#: The epsilons every result reports a winning rate for (the configured one is added).
EPSILON_GRID = (0.0, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30)
FloatArray = npt.NDArray[np.float64]
#: One column of labels: a sequence of Python values, or a polars Series.
Labels: TypeAlias = Sequence[Any] | pl.Series


def epsilon_key(epsilon: float) -> str:
    """The key of an epsilon in `winning_rate`: two decimals ("0.15"), more only when needed."""
    two = f"{epsilon:.2f}"
    return two if math.isclose(float(two), epsilon, abs_tol=1e-12) else f"{epsilon:g}"


@dataclass(frozen=True)
class AnnotatorOutcome:
    """The test of the LLM against one human annotator (left out in turn)."""

    n_instances: int
    """Instances of I_j: kept instances this annotator labelled."""
    llm_advantage: float
    """rho^f_j: share of I_j where the LLM represents the others at least as well as j."""
    human_advantage: float
    """rho^h_j: share of I_j where j represents the others at least as well as the LLM."""
    p_values: dict[str, float | None]
    """One-sided t-test p-value per epsilon key (None when undefined: never rejected)."""
    rejected: dict[str, bool]
    """Whether H0_j was rejected by Benjamini-Yekutieli, per epsilon key."""


@dataclass(frozen=True)
class AltTestResult:
    """What the alt-test found for one LLM against a panel of humans."""

    winning_rate: dict[str, float]
    """omega per epsilon key: share of tested annotators whose H0 was rejected."""
    advantage_probability: float
    """rho: mean over tested annotators of the LLM advantage probability (no epsilon)."""
    passed: bool
    """Whether the winning rate at the configured epsilon is at least 0.5."""
    epsilon: float
    multiplicative_epsilon: bool
    scoring_function: str
    n_instances: int
    """Instances kept: an LLM label and at least `min_humans_per_instance` human labels."""
    per_annotator: dict[str, AnnotatorOutcome]
    skipped_annotators: dict[str, int]
    """Annotators with fewer than `min_instances_per_human` kept instances, and their count."""
    llm_wins: FloatArray = field(repr=False, compare=False)
    """W^f per kept instance (rows) and tested annotator (columns); NaN outside I_j."""
    kept_instances: npt.NDArray[np.int64] = field(repr=False, compare=False)
    """Positions of the kept instances in the input, one per row of `llm_wins`."""


class AltTestOptions(TypedDict, total=False):
    """The keyword-only settings of `alt_test` and `alt_test_table` (defaults in the latter)."""

    epsilon: float
    multiplicative_epsilon: bool
    q_fdr: float
    min_instances_per_human: int
    min_humans_per_instance: int
    scoring_function: ScoringFunction | None


def alt_test(
    human_annotations: Mapping[Any, Mapping[Any, Any]],
    llm_annotations: Mapping[Any, Any],
    **options: Unpack[AltTestOptions],
) -> AltTestResult:
    """Run the alt-test of an LLM's labels against several humans' labels.

    Procedure (METRICS.md C): keep instances with an LLM label and at least
    `min_humans_per_instance` human labels; for annotator j and kept instance i that j labelled
    (I_j), S(x) = mean over the other humans' labels h of s(x, h); W^f = 1[S(llm) >= S(h_j)],
    W^h = 1[S(h_j) >= S(llm)] (ties give both 1); d = W^h - W^f (additive epsilon, tested
    against epsilon) or W^h - W^f / (1 - epsilon) (multiplicative, tested against 0) in a
    one-sided t-test; Benjamini-Yekutieli at `q_fdr` over the tested annotators; winning rate
    omega = rejected / tested; passed iff omega >= 0.5 at `epsilon`.

    Args:
        human_annotations: {annotator: {instance: label}}; absent or None = not labelled.
        llm_annotations: {instance: label}.
        **options: The test's settings (`AltTestOptions`), keyword-only, each optional:

            - epsilon (0.2): the cost-benefit margin, in [0, 1) (0.2 experts, 0.15 skilled,
              0.1 crowd).
            - multiplicative_epsilon (False): test rho^f > (1 - epsilon) rho^h instead of
              rho^h - rho^f < epsilon.
            - q_fdr (0.05): false discovery rate of Benjamini-Yekutieli, in (0, 1).
            - min_instances_per_human (30): annotators with fewer kept instances are skipped.
            - min_humans_per_instance (2): instances with fewer human labels are dropped
              (>= 2).
            - scoring_function (None): s(x, h): "accuracy" 1[x = h] (labels), "neg_rmse"
              -(x - h)^2 inside -sqrt(mean) (numbers), "jaccard" |A n B| / |A u B| with
              J(empty, empty) = 1 (label sets), "text_similarity" difflib ratio (free text).
              None picks from the labels: sets -> jaccard, numbers -> neg_rmse, anything
              else -> accuracy.

    Returns:
        An `AltTestResult`: winning rates for epsilon 0.00-0.30 and the configured epsilon,
        the average advantage probability, per-annotator outcomes and `passed`.

    Raises:
        ScoringError: An argument out of range, or no annotator left to test.

    References:
        arXiv:2501.10970; METRICS.md C and G.14-G.18.
    """
    annotators = list(human_annotations)
    instances = list(dict.fromkeys(i for labels in human_annotations.values() for i in labels))
    table = [[human_annotations[a].get(i) for i in instances] for a in annotators]
    llm = [llm_annotations.get(i) for i in instances]
    return alt_test_table(llm, table, [str(a) for a in annotators], **options)


def alt_test_table(
    llm_labels: Labels,
    human_labels: Sequence[Labels],
    annotators: Sequence[str],
    *,
    epsilon: float = 0.2,
    multiplicative_epsilon: bool = False,
    q_fdr: float = 0.05,
    min_instances_per_human: int = 30,
    min_humans_per_instance: int = 2,
    scoring_function: ScoringFunction | None = None,
) -> AltTestResult:
    """`alt_test` on aligned arrays: `human_labels[j][i]` is annotator j's label of instance i.

    `llm_labels[i]` is the LLM's label of instance i; None (or NaN) marks a missing label.
    Columns may be sequences or polars Series; Series of labels are compared as codes, never
    turned into Python values (a million instances in about a second). The
    keyword-only settings (`AltTestOptions`) and their defaults are declared here, once;
    `alt_test` documents them.
    """
    function = "alt_test"
    check_interval(function, "epsilon", epsilon, 0.0, 1.0, closed="left")
    check_interval(function, "q_fdr", q_fdr, 0.0, 1.0)
    check_interval(function, "min_instances_per_human", min_instances_per_human, 1,
                   float("inf"), closed="left", integer=True)  # fmt: skip
    check_interval(function, "min_humans_per_instance", min_humans_per_instance, 2,
                   float("inf"), closed="left", integer=True)  # fmt: skip
    if len(human_labels) != len(annotators):
        raise ScoringError(f"{function}: one row of labels per annotator is needed.")
    n = len(llm_labels)
    bad = [a for a, row in zip(annotators, human_labels, strict=True) if len(row) != n]
    if bad:
        count = len(human_labels[list(annotators).index(bad[0])])
        raise ScoringError(
            f"{function}: annotator {bad[0]!r} has labels for {count} instances, the LLM for "
            f"{n}; align them on the same instances."
        )
    if scoring_function is None:
        scoring_function = _scoring_for([llm_labels, *human_labels])
    check_choice(function, "scoring_function", scoring_function, SCORING_FUNCTIONS)
    llm_sim, human_sim, present = _similarities(llm_labels, human_labels, scoring_function)
    m = len(annotators)
    llm_present = _present(llm_labels)
    kept = llm_present & (present.sum(axis=1) >= min_humans_per_instance)

    epsilon = _on_grid(float(epsilon))
    epsilons = sorted({*EPSILON_GRID, epsilon})
    keys = [epsilon_key(e) for e in epsilons]
    tested: list[int] = []
    skipped: dict[str, int] = {}
    p_values: list[list[float]] = []
    outcomes: dict[str, tuple[int, float, float]] = {}
    # W^f of each kept instance (rows) against each annotator (columns), NaN outside I_j
    wins = np.full((int(kept.sum()), m), np.nan)
    for j in range(m):
        rows = kept & present[:, j]
        n_j = int(rows.sum())
        if n_j < min_instances_per_human:
            skipped[annotators[j]] = n_j
            continue
        others = present[rows]  # a copy: boolean indexing
        others[:, j] = False
        exact = llm_sim.dtype.kind == "i"  # 0/1 similarities: sums are counts, ties exact
        zero = llm_sim.dtype.type(0)  # keeps 0/1 similarities in bytes
        total = np.int32 if exact else np.float64
        sum_llm = np.where(others, llm_sim[rows], zero).sum(axis=1, dtype=total)
        sum_h = np.where(others, human_sim[j][rows], zero).sum(axis=1, dtype=total)
        tie = sum_llm == sum_h if exact else np.isclose(sum_llm, sum_h, rtol=1e-12, atol=1e-12)
        w_f = ((sum_llm > sum_h) | tie).astype(np.float64)
        w_h = ((sum_h > sum_llm) | tie).astype(np.float64)
        del others, sum_llm, sum_h, tie
        if multiplicative_epsilon:
            ps = [one_sided_ttest(w_h - w_f / (1.0 - e), 0.0) for e in epsilons]
        else:  # the same differences for every epsilon: their moments once
            moments = _Moments.of(w_h - w_f)
            ps = [moments.p_value(e) for e in epsilons]
        tested.append(j)
        p_values.append(ps)
        outcomes[annotators[j]] = (n_j, float(w_f.mean()), float(w_h.mean()))
        wins[rows[kept], j] = w_f
    if not tested:
        raise ScoringError(
            f"{function}: no annotator can be tested: each has fewer than "
            f"min_instances_per_human={min_instances_per_human} instances that an LLM label "
            f"and at least {min_humans_per_instance} human labels cover "
            f"({_describe(skipped)}). Annotate more instances or lower the threshold."
        )
    pvals = np.array(p_values)  # tested x epsilons
    rejected = np.column_stack(
        [benjamini_yekutieli(list(pvals[:, c]), q=q_fdr) for c in range(len(epsilons))]
    )
    winning = {key: float(rejected[:, c].mean()) for c, key in enumerate(keys)}
    per_annotator = {}
    for row, j in enumerate(tested):
        n_j, rho_f, rho_h = outcomes[annotators[j]]
        per_annotator[annotators[j]] = AnnotatorOutcome(
            n_instances=n_j,
            llm_advantage=rho_f,
            human_advantage=rho_h,
            p_values={
                k: (None if np.isnan(p) else float(p))
                for k, p in zip(keys, pvals[row], strict=True)
            },
            rejected={k: bool(r) for k, r in zip(keys, rejected[row], strict=True)},
        )
    rho = float(np.mean([o.llm_advantage for o in per_annotator.values()]))
    return AltTestResult(
        winning_rate=winning,
        advantage_probability=rho,
        passed=winning[epsilon_key(float(epsilon))] >= 0.5,
        epsilon=float(epsilon),
        multiplicative_epsilon=multiplicative_epsilon,
        scoring_function=scoring_function,
        n_instances=int(kept.sum()),
        per_annotator=per_annotator,
        skipped_annotators=skipped,
        llm_wins=wins if len(tested) == m else wins[:, tested],
        kept_instances=np.nonzero(kept)[0],
    )


def advantage_interval(
    result: AltTestResult, *, n_resamples: int = 1000, confidence_level: float = 0.95, seed: int = 0
) -> tuple[float | None, float | None]:
    """Bootstrap interval of the advantage probability, resampling the kept instances."""
    function = "advantage_interval"
    check_interval(function, "n_resamples", n_resamples, 1, float("inf"), closed="left",
                   integer=True)  # fmt: skip
    check_interval(function, "confidence_level", confidence_level, 0.0, 1.0)
    values = [
        advantage_under_weights(result, weights)
        for weights in weight_chunks(result.llm_wins.shape[0], n_resamples, seed)
    ]
    return percentile_interval(np.concatenate(values), confidence_level)


def advantage_under_weights(result: AltTestResult, weights: FloatArray) -> FloatArray:
    """The advantage probability with kept instance i counted `weights[r, i]` times, per row r."""
    wins = result.llm_wins
    inside = ~np.isnan(wins)
    hits = weights @ np.where(inside, wins, 0.0)
    totals = weights @ inside.astype(np.float64)
    rho = np.full(hits.shape, np.nan)
    np.divide(hits, totals, out=rho, where=totals > 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows stay NaN
        return np.asarray(np.nanmean(rho, axis=1), dtype=np.float64)


def _on_grid(epsilon: float) -> float:
    """The grid's own value for an epsilon within 1e-9 of it (0.1 + 0.05 is 0.15)."""
    for point in EPSILON_GRID:
        if abs(epsilon - point) < 1e-9:
            return point
    return epsilon


def choose_scoring_function(labels: Sequence[Any]) -> ScoringFunction:
    """The alignment score that fits these labels: sets, numbers or categories.

    Sets -> jaccard, numbers -> neg_rmse, anything else -> accuracy. Free text cannot be told
    from categories by its values: the scorer, which knows the task, picks text_similarity.
    """
    present = [v for v in labels if not is_missing(v)]
    if present and all(isinstance(v, list | tuple | set | frozenset) for v in present):
        return "jaccard"
    if present and all(
        isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool)
        for v in present
    ):
        return "neg_rmse"
    return "accuracy"


def _scoring_for(columns: Sequence[Labels]) -> ScoringFunction:
    """`choose_scoring_function` over several columns; polars columns by their dtype alone."""
    series = [c for c in columns if isinstance(c, pl.Series)]
    if len(series) == len(columns):
        dtypes = {c.dtype for c in series if c.dtype != pl.Null and c.null_count() < c.len()}
        if dtypes and all(isinstance(d, pl.List | pl.Array) for d in dtypes):
            return "jaccard"
        if dtypes and all(d.is_numeric() for d in dtypes):
            return "neg_rmse"
        if all(d == pl.String or d == pl.Categorical or isinstance(d, pl.Enum) for d in dtypes):
            return "accuracy"
    return choose_scoring_function([v for column in columns for v in _plain(column)])


def _plain(column: Labels) -> Sequence[Any]:
    """A column's Python values (a polars column becomes a list)."""
    return column.to_list() if isinstance(column, pl.Series) else column


def _present(column: Labels) -> npt.NDArray[np.bool_]:
    """Whether each label is there (not None, not NaN)."""
    if isinstance(column, pl.Series):
        there = column.is_not_null()
        if column.dtype.is_float():
            there = there & ~column.is_nan().fill_null(False)
        return there.to_numpy()
    return np.array([not is_missing(v) for v in column], dtype=bool)


def one_sided_ttest(differences: Sequence[float] | FloatArray, value: float) -> float:
    """p-value of the one-sided one-sample t-test H1: mean(differences) < value.

    p = F_{t, n-1}((mean(d) - value) / (s_d / sqrt(n))), s_d with ddof 1, as
    `scipy.stats.ttest_1samp(d, value, alternative="less")`. When every difference is equal
    (zero variance) p is 0 if the mean is below `value`, 1 above it, NaN when equal; NaN also
    for fewer than two differences (METRICS.md C.4, G.17).
    """
    return _Moments.of(np.asarray(differences, dtype=np.float64)).p_value(value)


@dataclass(frozen=True)
class _Moments:
    """What the one-sided t-test needs of the differences, computed once for every epsilon."""

    n: int
    mean: float
    sd: float | None
    """Standard deviation (ddof 1); None when every difference is equal."""

    @classmethod
    def of(cls, d: FloatArray) -> _Moments:
        if d.size < 2:
            return cls(d.size, float("nan"), None)
        constant = bool(np.all(d == d[0]))
        return cls(d.size, float(d.mean()), None if constant else float(d.std(ddof=1)))

    def p_value(self, value: float) -> float:
        """`one_sided_ttest(d, value)` from the moments of d."""
        # Student's t CDF; scipy.stats would take twice as long to import
        from scipy.special import stdtr  # type: ignore[import-untyped]

        if self.n < 2:
            return float("nan")
        if self.sd is None:
            mean = self.mean
            return 0.0 if mean < value else 1.0 if mean > value else float("nan")
        stat = (self.mean - value) / (self.sd / math.sqrt(self.n))
        return float(stdtr(self.n - 1, stat))


def benjamini_yekutieli(p_values: Sequence[float | None], q: float = 0.05) -> list[bool]:
    """Which hypotheses Benjamini-Yekutieli rejects at false discovery rate `q`.

    Sort the m p-values ascending, H_m = sum_{k<=m} 1/k, find the largest rank k with
    p_(k) <= (k / m) q / H_m and reject the k smallest (a step-up procedure). NaN or None
    p-values are never rejected but count in m. Same as statsmodels
    `multipletests(p, alpha=q, method="fdr_by")[0]`.

    Example:
        >>> benjamini_yekutieli([0.001, 0.2, 0.01], q=0.05)
        [True, False, True]
    """
    check_interval("benjamini_yekutieli", "q", q, 0.0, 1.0)
    p = np.array([np.nan if v is None else float(v) for v in p_values], dtype=np.float64)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    ranks = np.arange(1, m + 1)
    harmonic = float(np.sum(1.0 / ranks))
    sorted_p = p[order]
    passing = np.where(~np.isnan(sorted_p) & (sorted_p <= ranks / m * q / harmonic))[0]
    rejected = np.zeros(m, dtype=bool)
    if passing.size:
        rejected[order[: passing[-1] + 1]] = True
    return [bool(r) for r in rejected]


def _similarities(
    llm_labels: Labels, human_labels: Sequence[Labels], scoring: str
) -> tuple[npt.NDArray[Any], list[npt.NDArray[Any]], npt.NDArray[np.bool_]]:
    """s(llm_i, h_ik), s(h_ij, h_ik) per annotator j (instances x annotators), and presence.

    Floats, or bytes for accuracy (0 or 1). Columns other than accuracy's are Python values.
    """
    n, m = len(llm_labels), len(human_labels)
    if scoring == "accuracy":
        codes, categories = encode_labels(llm_labels, *human_labels)
        # the smallest integers that hold the codes: a million instances, a few MB
        small = np.min_scalar_type(-max(len(categories), 1))
        llm = codes[0].astype(small)
        humans = np.column_stack([c.astype(small) for c in codes[1:]]) if m else np.empty((n, 0))
        del codes
        present = humans >= 0
        # 0 or 1: bytes, not floats (a million instances and three humans: 3 MB, not 24)
        llm_sim = (humans == llm[:, None]).astype(np.int8)
        human_sim = [(humans == humans[:, [j]]).astype(np.int8) for j in range(m)]
        return llm_sim, human_sim, present
    # the other scores compare Python values
    llm_values, human_values = _plain(llm_labels), [_plain(row) for row in human_labels]
    if scoring == "neg_rmse":
        llm_v = _numbers(llm_values)
        humans_v = np.column_stack([_numbers(row) for row in human_values])
        present = ~np.isnan(humans_v)
        llm_sim = -((llm_v[:, None] - humans_v) ** 2)
        human_sim = [-((humans_v[:, [j]] - humans_v) ** 2) for j in range(m)]
        return llm_sim, human_sim, present
    if scoring == "jaccard":
        return _jaccard(llm_values, human_values)
    present = np.array([[not is_missing(v) for v in row] for row in human_values]).T
    llm_sim = np.array(
        [
            [_text(x, h) for h in column]
            for x, column in zip(llm_values, zip(*human_values, strict=True), strict=True)
        ]
    ).reshape(n, m)
    human_sim = []
    for j in range(m):
        human_sim.append(
            np.array(
                [
                    [_text(human_values[j][i], human_values[k][i]) for k in range(m)]
                    for i in range(n)
                ]
            ).reshape(n, m)
        )
    return llm_sim, human_sim, present


def _text(a: Any, b: Any) -> float:
    return float("nan") if is_missing(a) or is_missing(b) else text_similarity(str(a), str(b))


def _numbers(values: Sequence[Any]) -> FloatArray:
    try:
        return np.array([np.nan if is_missing(v) else float(v) for v in values], dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ScoringError(
            f"alt_test: scoring_function 'neg_rmse' needs numeric labels ({exc})."
        ) from None


def _jaccard(
    llm_labels: Sequence[Any], human_labels: Sequence[Sequence[Any]]
) -> tuple[FloatArray, list[FloatArray], npt.NDArray[np.bool_]]:
    """Set Jaccard through bit masks: each distinct element is one bit."""
    columns = [list(llm_labels), *(list(r) for r in human_labels)]
    elements: dict[Hashable, int] = {}
    for column in columns:
        for value in column:
            if is_missing(value):
                continue
            if not isinstance(value, list | tuple | set | frozenset):
                raise ScoringError(
                    f"alt_test: scoring_function 'jaccard' needs label sets (lists); got {value!r}."
                )
            for item in value:
                elements.setdefault(item if not isinstance(item, list) else tuple(item), None)  # type: ignore[arg-type]
    index = {e: b for b, e in enumerate(elements)}
    masks = [_masks(c, index, wide=len(index) > 62) for c in columns]  # 62 bits fit an int64
    llm, humans = masks[0], np.column_stack(masks[1:])
    present = humans >= 0

    def jaccard(a: npt.NDArray[Any], b: npt.NDArray[Any]) -> FloatArray:
        inter = _popcount(a & b)
        union = _popcount(a | b)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(union == 0, 1.0, inter / np.maximum(union, 1)).astype(np.float64)

    llm_sim = jaccard(np.maximum(llm, 0)[:, None], np.maximum(humans, 0))
    human_sim = [
        jaccard(np.maximum(humans[:, [j]], 0), np.maximum(humans, 0))
        for j in range(humans.shape[1])
    ]
    return llm_sim, human_sim, present


def _masks(column: list[Any], index: dict[Hashable, int], *, wide: bool) -> npt.NDArray[Any]:
    """Each label set as a bit mask over `index`, -1 where missing; `wide`: Python ints."""
    out = np.empty(len(column), dtype=object if wide else np.int64)
    for i, value in enumerate(column):
        if is_missing(value):
            out[i] = -1
        else:
            mask = 0
            for item in value:
                mask |= 1 << index[item if not isinstance(item, list) else tuple(item)]
            out[i] = mask
    return out


def _popcount(values: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    if values.dtype == object:
        counted: npt.NDArray[np.int64] = np.vectorize(
            lambda v: int(v).bit_count(), otypes=[np.int64]
        )(values)
        return counted
    return np.asarray(np.bitwise_count(values), dtype=np.int64)


def _describe(skipped: dict[str, int]) -> str:
    shown = ", ".join(f"{a}: {n}" for a, n in list(skipped.items())[:5])
    return shown or "no annotators"
