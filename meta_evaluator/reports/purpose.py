"""What a project measures, said in the report's title, from the scorers it was scored with.

A project whose judges are scored against humans asks whether they can stand in for them; a
preference project asks which traits the preferences reward; one that scores the model's own
answers (fairness, counterfactual, stereotype, multiple choice) asks about the model, whose
"judges" are then the models under test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meta_evaluator.reports.inputs import ReportInputs

__all__ = ["MODEL_KINDS", "project_kinds", "report_title", "subjects"]

#: The scorers that evaluate the model's own answers, not a judge against humans.
MODEL_KINDS = ("fairness", "counterfactual", "stereotype", "multiple_choice")
#: Each kind's question; `{model}` is "the model" at its first mention, then "it".
_QUESTIONS = {
    "agreement": "can the judges stand in for the humans",
    "preference": "which traits do the human preferences reward",
    "fairness": "is {model} fair across groups",
    "counterfactual": "does {model's} answer change when only the group changes",
    "stereotype": "does {model} prefer stereotypes",
    "multiple_choice": "does {model} answer multiple-choice questions right",
}


def project_kinds(inputs: ReportInputs) -> list[str]:
    """The kinds of measurement the project's scores hold, in `_QUESTIONS`' order.

    Any scorer that is not a model evaluation or preference one compares judges with humans
    (`agreement`); a project without scores yet is an agreement one when it has annotators.
    """
    scorers = {key.split("/", 1)[0] for key in inputs.scores}
    kinds = {s for s in scorers if s in _QUESTIONS}
    if scorers - kinds or (not scorers and inputs.humans):
        kinds.add("agreement")
    return [k for k in _QUESTIONS if k in kinds]


def report_title(inputs: ReportInputs) -> str:
    """The page's title: what the project asks, and its name (plain text, to be escaped).

    `Is the model fair across groups, and does its answer change when only the group
    changes? students`; `meta-evaluator report: students` when nothing says what it asks.
    """
    kinds = project_kinds(inputs)
    if not kinds:
        return f"meta-evaluator report: {inputs.project_name}"
    clauses = []
    named = False
    for kind in kinds:
        text = _QUESTIONS[kind]
        if "{model" in text:
            text = text.replace("{model's}", "its" if named else "the model's")
            text = text.replace("{model}", "it" if named else "the model")
            named = True
        clauses.append(text)
    question = clauses[-1] if len(clauses) == 1 else f"{', '.join(clauses[:-1])}, and {clauses[-1]}"
    return f"{question[0].upper()}{question[1:]}? {inputs.project_name}"


def subjects(inputs: ReportInputs) -> str:
    """`2 judges`, or `1 model under test` when every score is about the model's answers.

    The votes imported with preference pairs are not a judge: they are named apart (`1 judge;
    the trait votes imported with the pairs: annotated_pairs`).
    """
    count = len([j for j in inputs.judges if j not in inputs.vote_sets])
    kinds = project_kinds(inputs)
    if kinds and all(k in MODEL_KINDS for k in kinds):
        said = f"{count} model{'s' if count != 1 else ''} under test"
    else:
        said = f"{count} judge{'s' if count != 1 else ''}"
    if inputs.vote_sets:
        said += f"; the trait votes imported with the pairs: {', '.join(sorted(inputs.vote_sets))}"
    return said
