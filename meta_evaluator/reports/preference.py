"""The preference section: which traits the human preferences reward, and how surely.

For each `preference` metric: per judge the five scores averaged over its traits (relevance,
accuracy, Cohen's kappa at chance agreement p_e and with p_e estimated, strength) with their
bootstrap intervals; the traits ranked by strength with the percentile interval of strength,
the p-value and the votes behind each row; the plot of strength by trait; strength per group
(`group_by`); and the statistics of the reference preferences themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from meta_evaluator.reports._tables import task_spread
from meta_evaluator.reports.html import escape
from meta_evaluator.reports.section_parts import figures, kind_sections, number, rate, table
from meta_evaluator.scores.metrics.preference import trait_rows

if TYPE_CHECKING:
    from meta_evaluator.reports.inputs import ReportInputs
    from meta_evaluator.scores.base_scoring_result import ScoringResult

__all__ = ["SCORES", "preference_section"]

#: The five scores: key and name.
SCORES = (
    ("relevance", "relevance"),
    ("accuracy", "accuracy"),
    ("cohens_kappa", "kappa, fixed p_e"),
    ("cohens_kappa_estimated", "kappa, estimated p_e"),
    ("strength", "strength"),
)
#: The statistics of the reference preferences: key and name.
STATISTICS = (
    ("num_pairs", "pairs with a preference"),
    ("prop_preferring_text_a", "share preferring text_a"),
    ("prop_preferring_longer", "share preferring the longer text"),
    ("num_equal_length_pairs", "pairs of equal length (left out of the share above)"),
    ("avg_len_preferred", "mean length preferred (characters)"),
    ("avg_len_rejected", "mean length rejected (characters)"),
    ("avg_len_text_a", "mean length of text_a"),
    ("avg_len_text_b", "mean length of text_b"),
)


def preference_section(inputs: ReportInputs) -> str:
    """Every preference metric of the project, one part each ("" without any)."""
    return kind_sections(inputs, "preference", "Preferences", _body, plots_in_body=True)


def _body(inputs: ReportInputs, name: str, scored: list[ScoringResult]) -> list[str]:
    """What the section shows of one metric between its heading and its failures."""
    parts: list[str] = []
    if scored:
        p_e = _chance_agreement(scored[0])
        traits = list(dict.fromkeys(t for r in scored for t in _entries(r)))
        votes = (
            "for the text that shows a trait more"
            if len(traits) > 1
            else f"on <code>{escape(traits[0])}</code>"
        )
        parts.append(
            f"<p>Each judge votes, pair by pair, {votes}; its votes are compared with the human "
            "preference. Relevance: share of pairs where the judge "
            "voted; accuracy: share of its votes that match the preference; kappa, fixed p_e: "
            f"(accuracy - p_e) / (1 - p_e) with chance agreement p_e = {number(p_e, 2)}; kappa, "
            "estimated p_e: Cohen's kappa with p_e from the votes; strength: kappa (fixed "
            "p_e) times relevance, from -1 (the preferences avoid the trait) through 0 (the "
            "trait does not explain them) to +1 (they reward it).</p>"
        )
        if len(traits) > 1:
            parts.append(f"<h3>Mean over the {len(traits)} traits</h3>")
            parts.append(_averages(scored))
            parts.append("<h3>Traits ranked by strength</h3>")
        else:
            parts.append(f"<h3>Scores on {escape(traits[0])}</h3>")
            parts.append(_averages(scored))
            parts.append(f"<h3>Strength on {escape(traits[0])}, judges ranked</h3>")
        parts.append(_traits(scored))
        parts.append(figures(inputs, "preference", name))
        parts.append(_per_group(scored))
        parts.append(_statistics(scored))
    return parts


def _entries(result: ScoringResult) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Trait -> (scores, metadata): each task of a multitask metric, or the one task."""
    per_task = result.metadata.get("per_task")
    if not per_task:
        return {result.task_name: (result.scores, result.metadata)}
    return {
        trait: (entry.get("scores") or {}, entry.get("metadata") or {})
        for trait, entry in per_task.items()
        if "scores" in entry
    }


def _chance_agreement(result: ScoringResult) -> Any:
    for _, metadata in _entries(result).values():
        if "chance_agreement" in metadata:
            return metadata["chance_agreement"]
    return None


def _averages(results: list[ScoringResult]) -> str:
    """Per judge the five scores (the mean over the traits of a multitask metric).

    With several traits, the strength's lowest and highest trait are said under the table: a
    mean near 0 may hide one trait the preferences reward and another they avoid.
    """
    spreads = {r.judge_id: task_spread(r, "strength") for r in results}
    several = any(spreads.values())
    one = all(len(_entries(r)) == 1 for r in results)  # a trait count of 1 says nothing
    headers = ["judge", *([] if one else ["traits"]), "comparisons",
               *(label for _, label in SCORES)]  # fmt: skip
    if several:
        headers[-1] = "strength (mean)"
    rows = []
    for r in results:
        intervals = r.confidence_intervals or {}
        rows.append(
            [r.judge_id, *([] if one else [str(len(_entries(r)))]), str(r.num_comparisons),
             *(rate(r.scores.get(key), intervals.get(key)) for key, _ in SCORES)]
        )  # fmt: skip
    parts = [table(headers, rows, numeric_from=1)]
    if several:
        ranges = [
            f"from <b>{spread.low:+.3f}</b> ({escape(spread.low_task)}) to "
            f"<b>{spread.high:+.3f}</b> ({escape(spread.high_task)}) for {escape(judge)}"
            for judge, spread in spreads.items()
            if spread is not None
        ]
        said = ranges[0] if len(ranges) == 1 else f"{', '.join(ranges[:-1])}, and {ranges[-1]}"
        parts.append(
            "<p class='spread'>Each score is a mean over the judge's traits, which lie apart: "
            f"strength ranges {said} (ranked below).</p>"
        )
    if any(r.confidence_intervals for r in results):
        parts.append(
            "<p class='muted'>In brackets, the percentile bootstrap interval over pairs (the "
            "metric's <code>bootstrap</code>).</p>"
        )
    return "".join(parts)


def _traits(results: list[ScoringResult]) -> str:
    headers = [
        "trait", "judge", "strength [95% interval]", *(label for _, label in SCORES[:4]),
        "p-value", "pairs", "agree / disagree / no vote",
    ]  # fmt: skip
    rows = []
    for row in trait_rows(results):
        votes = (row["agreed"], row["disagreed"], row["not_applicable"])
        rows.append(
            [row["trait"], row["judge"],
             rate(row["strength"], [row["low_2.5"], row["high_97.5"]]),
             *(number(row[key]) for key, _ in SCORES[:4]), number(row["p_value"], 4),
             _count(row["num_pairs"]),
             "n/a" if None in votes else " / ".join(str(v) for v in votes)]
        )  # fmt: skip
    return table(headers, rows, numeric_from=2) + (
        "<p class='muted'>Strength interval: percentiles 2.5 and 97.5 of strength over "
        "multinomial draws of the agree, disagree and no-vote counts (Feedback Forensics' "
        "procedure, seeded). p-value: one-sided binomial test of agree against disagree at "
        "0.5. No vote: pairs where the judge gave no valid vote (tie, invalid).</p>"
    )


def _count(value: Any) -> str:
    return "n/a" if value is None else str(value)


def _per_group(results: list[ScoringResult]) -> str:
    """Strength (pairs) per value of the metric's `group_by` column, per judge and trait."""
    groups: dict[str, None] = {}
    found = []
    for r in results:
        for trait, (_, metadata) in _entries(r).items():
            per_group = metadata.get("per_group") or {}
            groups.update(dict.fromkeys(per_group))
            if per_group:
                found.append((r.judge_id, trait, per_group))
    if not found:
        return ""
    names = list(groups)
    rows = [
        [judge, trait, *(_strength(per_group.get(g)) for g in names)]
        for judge, trait, per_group in found
    ]
    return (
        "<h3>Strength per group</h3><p class='muted'>Strength of each trait within each value "
        "of the metric's <code>group_by</code> column; in brackets, the pairs it rests on.</p>"
        + table(["judge", "trait", *names], rows, numeric_from=2)
    )


def _strength(found: Any) -> str:
    if not found:
        return ""
    return f"{number(found.get('strength'))} ({_count(found.get('num_pairs'))})"


def _statistics(results: list[ScoringResult]) -> str:
    """The reference preferences' own statistics, once per distinct set of pairs."""
    distinct: dict[tuple[Any, ...], list[str]] = {}
    values: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in results:
        for trait, (_, metadata) in _entries(r).items():
            statistics = metadata.get("dataset_statistics")
            if not statistics:
                continue
            key = tuple(statistics.get(k) for k, _ in STATISTICS)
            distinct.setdefault(key, []).append(f"{r.judge_id} / {trait}")
            values[key] = statistics
    if not distinct:
        return ""
    several = len(distinct) > 1
    headers = [
        "statistic",
        *([f"({i + 1})" for i in range(len(distinct))] if several else ["value"]),
    ]
    rows = []
    for stat, label in STATISTICS:
        digits = 0 if stat.startswith(("num_", "avg_len")) else 3
        rows.append([label, *(number(values[k].get(stat), digits) for k in distinct)])
    where = (
        ""
        if not several
        else "<p class='muted'>"
        + "; ".join(
            f"({i + 1}): the pairs of {escape(', '.join(owners))}"
            for i, owners in enumerate(distinct.values())
        )
        + "</p>"
    )
    return (
        "<h3>The human preferences themselves</h3><p class='muted'>On the pairs with a valid "
        "preference: which side and which length they favour.</p>"
        + table(headers, rows, numeric_from=1)
        + where
    )
