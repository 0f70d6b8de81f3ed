"""Projects the report tests build: an example run and scored (`scored_example`), and a
multiple-choice one (no example has that kind) made by `answered_questions`, which the scorer
tests use too."""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.examples import create_example_project
from meta_evaluator.scores import MetricConfig, MetricsConfig
from meta_evaluator.scores.metrics import MultipleChoiceScorer
from meta_evaluator.scores.yaml_config import read_metrics_yaml

CAPITALS = {
    "en": [("France", "Paris"), ("Italy", "Rome"), ("Spain", "Madrid"), ("Japan", "Tokyo"),
           ("Canada", "Ottawa"), ("Kenya", "Nairobi"), ("Peru", "Lima"), ("Chile", "Santiago"),
           ("Egypt", "Cairo"), ("Norway", "Oslo"), ("Poland", "Warsaw"), ("Greece", "Athens")],
    "fr": [("Allemagne", "Berlin"), ("Portugal", "Lisbonne"), ("Suède", "Stockholm"),
           ("Irlande", "Dublin"), ("Autriche", "Vienne"), ("Mexique", "Mexico"),
           ("Inde", "New Delhi"), ("Chine", "Pékin"), ("Maroc", "Rabat"), ("Cuba", "La Havane")],
    "de": [("Dänemark", "Kopenhagen"), ("Finnland", "Helsinki"), ("Ungarn", "Budapest"),
           ("Tschechien", "Prag"), ("Belgien", "Brüssel"), ("Türkei", "Ankara"),
           ("Russland", "Moskau"), ("Brasilien", "Brasília")],
}  # fmt: skip
WRONG = ["Lyon", "Milan", "Sevilla", "Osaka", "Toronto", "Graz"]
#: Per judge and language: the chance of a correct, an incorrect and an unreadable answer.
STYLE = {
    "mc_strong": {"en": (0.85, 0.1, 0.05), "fr": (0.7, 0.2, 0.1), "de": (0.5, 0.2, 0.3)},
    "mc_weak": {"en": (0.6, 0.3, 0.1), "fr": (0.4, 0.3, 0.3), "de": (0.2, 0.2, 0.6)},
}


def scored_example(name: str, folder: Path, run_id: str | None = None) -> MetaEvaluator:
    """The example `name` made in `folder`, its judges run (as `run_id` when given) and scored
    with its own metrics.yaml."""
    evaluator = create_example_project(name, folder)
    evaluator.run_judges_async(**({} if run_id is None else {"run_id": run_id}))
    evaluator.compare_async(read_metrics_yaml(folder / "metrics.yaml"))
    return evaluator


def multiple_choice_project(root: Path, name: str = "capitals") -> MetaEvaluator:
    """30 capital-city questions in English, French and German, answered by two imported
    models as raw JSON (`{"choice": ...}`), some unreadable; scored by language."""
    rng = random.Random(18)
    rows = []
    for language, pairs in CAPITALS.items():
        for country, capital in pairs:
            options = [capital, *rng.sample(WRONG, 2)]
            rng.shuffle(options)
            rows.append((len(rows) + 1, country, options, capital, language))
    frame = pl.DataFrame(
        {
            "qid": [r[0] for r in rows],
            "question": [f"Capital of {r[1]}?" for r in rows],
            "options": [json.dumps(r[2], ensure_ascii=False) for r in rows],
            "answer": [r[3] for r in rows],
            "language": [r[4] for r in rows],
        }
    )
    answers: dict[str, list[tuple[int, str]]] = {}
    for judge, style in STYLE.items():
        for qid, _, options, capital, language in rows:
            draw = rng.random()
            correct, incorrect, _ = style[language]
            if draw < correct:
                answer = json.dumps({"choice": capital}, ensure_ascii=False)
            elif draw < correct + incorrect:
                wrong = next(o for o in options if o != capital)
                answer = json.dumps({"choice": wrong}, ensure_ascii=False)
            else:
                answer = f"I think it is {capital}."
            answers.setdefault(judge, []).append((qid, answer))
    return answered_questions(root, name, frame, answers)


def answered_questions(
    root: Path, name: str, questions: pl.DataFrame, answers: Mapping[str, list[tuple[int, str]]]
) -> MetaEvaluator:
    """A new project `root/name`: `questions` as its data (ids in `qid`, columns `question` and
    `options`, a JSON list, among others), the one free-text task `answer` over them, and each
    model's raw answers (id, text) imported as a judge from `root/MODEL.csv`."""
    root.mkdir(parents=True, exist_ok=True)
    evaluator = MetaEvaluator(root / name, load=False)
    evaluator.add_data(DataLoader.load_from_dataframe(name, questions, "qid"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"answer": None},
            prompt_columns=["question"],
            response_columns=["options"],
            answering_method="text",
            required_tasks=["answer"],
        )
    )
    for model, given in answers.items():
        path = root / f"{model}.csv"
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["original_id", "answer"])
            writer.writerows(given)
        evaluator.add_external_judge_results(path, model)
    return evaluator


def multiple_choice_metrics() -> MetricsConfig:
    """The multiple-choice metric, by language."""
    return MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=MultipleChoiceScorer(language_column="language"),
                task_names=["answer"],
                aggregation_name="single",
                display_name="capitals_by_language",
            )
        ]
    )


def fairness_project(root: Path, name: str = "loans") -> MetaEvaluator:
    """80 loan applications with two numeric sensitive columns (female, age), one of text
    (region) and the true outcome; two imported models predict `approve` or `deny`, one of
    them leaning against women and the young."""
    rng = random.Random(7)
    rows = []
    for i in range(1, 81):
        female = rng.random() < 0.5
        age = rng.randint(19, 70)
        region = rng.choice(["north", "south", "east"])
        gold = "approve" if rng.random() < 0.55 else "deny"
        rows.append((i, int(female), age, region, gold))
    root.mkdir(parents=True, exist_ok=True)
    evaluator = MetaEvaluator(root / name, load=False)
    frame = pl.DataFrame(
        {
            "app_id": [r[0] for r in rows],
            "application": [f"Application {r[0]}" for r in rows],
            "female": [r[1] for r in rows],
            "age": [r[2] for r in rows],
            "region": [r[3] for r in rows],
            "outcome_true": [r[4] for r in rows],
        }
    )
    evaluator.add_data(DataLoader.load_from_dataframe(name, frame, "app_id"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"decision": ["approve", "deny"]},
            prompt_columns=None,
            response_columns=["application"],
        )
    )
    for judge, bias in (("model_fair", 0.0), ("model_biased", 0.3)):
        path = root / f"{judge}.csv"
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["original_id", "decision"])
            for app_id, female, age, _, gold in rows:
                right = 0.8 - bias * (female + (age < 35)) / 2
                agrees = rng.random() < right
                other = "deny" if gold == "approve" else "approve"
                writer.writerow([app_id, gold if agrees else other])
        evaluator.add_external_judge_results(path, judge)
    return evaluator


def fairness_metrics() -> MetricsConfig:
    """Fairness over the two numeric columns and the text one, against the true outcome; the
    spreads of the many-group columns by fairlearn's agg="mean" and method="to_overall"."""
    from meta_evaluator.scores.metrics import FairnessScorer

    scorer = FairnessScorer(
        ["female", "age", "region"], "approve",
        thresholds={"female": (0.5, False), "age": (35.0, True)}, gold_column="outcome_true",
        agg="mean", method="to_overall",
    )  # fmt: skip
    return MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=scorer,
                task_names=["decision"],
                aggregation_name="single",
                display_name="loan_fairness",
            )
        ]
    )
