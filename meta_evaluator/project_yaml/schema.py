"""The schema of `project.yaml`: a whole project (data, task, judges, labels, metrics) in one file.

```yaml
data: {file: data/chats.csv, id_column: sample_id}
task:
  task_schemas: {rejection: [rejection, not rejection]}
  prompt_columns: [prompt]
  response_columns: [llm_response]
judges:
  - {id: offline, llm_client: mock, model: mock-1, prompt_file: prompts/refusal.md}
  - more_judges.yaml
annotations:
  - {path: annotations/ana.csv, annotator_id: ana}
metrics: metrics.yaml
drift: {max_psi: 0.1, max_changed_share: 0.1, max_agreement_drop: 0.05}
```

Every model here is frozen and refuses unknown keys; each field's docstring is its
documentation (docs/project-yaml.md lists them, and a test keeps the two the same). Paths are
relative to the `project.yaml` that names them. This module only checks shapes and values;
`meta_evaluator.project_yaml.reader` checks what the paths lead to.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict, Field, field_validator

from meta_evaluator._util import shown
from meta_evaluator._validation import ConfigModel
from meta_evaluator.data.loader import FileFormat
from meta_evaluator.errors import MetaEvaluatorError, ProjectFileError, UnsafeNameError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.scores.drift import DriftThresholds
from meta_evaluator.storage import check_safe_name

__all__ = [
    "AnnotationsEntry",
    "DataSection",
    "ProjectFile",
    "ResultsEntry",
    "SampleSection",
]


class _Section(ConfigModel):
    """A part of `project.yaml`: frozen, unknown keys refused, field docstrings as descriptions."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", hide_input_in_errors=True, use_attribute_docstrings=True
    )
    error_class: ClassVar[type[MetaEvaluatorError]] = ProjectFileError


class SampleSection(_Section):
    """A stratified sample of the data (`EvalData.stratified_sample_by_columns`)."""

    columns: list[str] = Field(min_length=1)
    """The columns whose value combinations are the strata; each keeps the same share."""
    sample_percentage: float = Field(gt=0, le=1)
    """The share of each stratum kept, in (0, 1]: `0.1` keeps 10% (at least one row each)."""
    seed: int = Field(42, ge=0)
    """The random seed: the same data, columns, share and seed give the same sample."""
    sample_name: str | None = None
    """A name for the sample; default: derived from the data's name and the parameters."""


class DataSection(_Section):
    """The evaluation data: one file, read with `DataLoader`."""

    key_synonyms: ClassVar[dict[str, str]] = {"path": "file", "id": "id_column"}

    file: str = Field(min_length=1)
    """The data file, relative to `project.yaml`."""
    format: FileFormat | None = None
    """`csv`, `json` (records or columns), `jsonl` or `parquet`; default: from the file's
    extension (`.csv`, `.json`, `.jsonl` or `.ndjson`, `.parquet` or `.pq`)."""
    id_column: str | None = None
    """The column of unique ids (integers or strings; their type is kept everywhere); none:
    ids `id-1 … id-N` are assigned in a new first column `id`."""
    name: str | None = None
    """The data set's name; default: the file's name without its extension."""
    sample: SampleSection | None = None
    """Judge a stratified sample of the rows instead of all of them."""


class _LabelsFile(_Section):
    """One file of labels made elsewhere (the arguments of the facade's import methods)."""

    path: str = Field(min_length=1)
    """The file (CSV, JSON, JSON Lines or Parquet), relative to `project.yaml`: one row per data
    row labelled, the id in `id_column`, one column per task."""
    run_id: str | None = None
    """The run the labels are saved as; default: a new run id."""
    id_column: str = "original_id"
    """The column holding the data's ids."""
    tasks: list[str] | None = Field(None, min_length=1)
    """Only these tasks were labelled (the others stay empty and are not required); default:
    every required task."""

    @field_validator("run_id")
    @classmethod
    def _safe_run_id(cls, value: str | None) -> str | None:
        return None if value is None else _safe(value, "run_id")


class AnnotationsEntry(_LabelsFile):
    """One annotator's labels: `MetaEvaluator.add_external_annotation_results`' arguments."""

    key_synonyms: ClassVar[dict[str, str]] = {
        "file": "path", "judge_id": "annotator_id", "annotator": "annotator_id",
    }  # fmt: skip

    annotator_id: str
    """Whose labels these are (a safe file name: letters, digits, `_`, `-`, `.`)."""

    @field_validator("annotator_id")
    @classmethod
    def _safe_annotator(cls, value: str) -> str:
        return _safe(value, "annotator_id")


class ResultsEntry(_LabelsFile):
    """A judge's labels made elsewhere: `MetaEvaluator.add_external_judge_results`' arguments."""

    key_synonyms: ClassVar[dict[str, str]] = {
        "file": "path", "annotator_id": "judge_id", "judge": "judge_id",
    }  # fmt: skip

    judge_id: str
    """The judge that made these labels (a safe file name); imported as its complete run."""

    @field_validator("judge_id")
    @classmethod
    def _safe_judge(cls, value: str) -> str:
        return _safe(value, "judge_id")


class ProjectFile(_Section):
    """The whole of `project.yaml`.

    Every section may be left out: `init --from` builds what is given, and the commands
    `add-task`, `add-judges`, `import-annotations` and `import-results` add the rest.
    """

    data: DataSection | None = None
    """The evaluation data."""
    task: EvalTask | None = None
    """The evaluation task, with the keys of `EvalTask`: `task_schemas` (task name → list of
    labels, `{outcomes: [...]}` for multi-label, or null for free text), `prompt_columns`,
    `response_columns`, `answering_method` (`structured`, `xml`, `text`),
    `structured_outputs_fallback`, `required_tasks`, `annotation_prompt`."""
    judges: list[dict[str, Any] | str] = Field(default_factory=list)
    """The judges: each an entry with the keys of a judges YAML file (`id`, `llm_client`,
    `model`, `prompt_file` or `prompt`, ...), or the path of a judges YAML file; prompt files
    are relative to the YAML that names them."""
    annotations: list[AnnotationsEntry] = Field(default_factory=list)
    """Human labels made elsewhere, one file per annotator (`path`, `annotator_id`)."""
    results: list[ResultsEntry] = Field(default_factory=list)
    """Judge results made elsewhere, imported as complete runs (`path`, `judge_id`)."""
    metrics: list[dict[str, Any]] | str | None = None
    """What `meta-evaluator score` computes: the entries of a metrics YAML file (`scorer`,
    `args`, `task_names`, `aggregation_name`, ...), or the path of one."""
    drift: DriftThresholds | None = None
    """When `meta-evaluator drift` says a judge drifted (exit status 5): `max_psi`,
    `max_changed_share`, `max_agreement_drop` (each null: not checked) and `agreement` (the
    score the drop is measured on); left out, the defaults of each key."""

    @field_validator("judges", mode="before")
    @classmethod
    def _judge_entries(cls, value: Any) -> Any:
        if isinstance(value, list):
            wrong = [i for i, entry in enumerate(value) if not isinstance(entry, dict | str)]
            if wrong:
                raise ValueError(
                    f"entries {wrong} must each be a judge (a mapping) or the path of a judges "
                    f"YAML file, got {shown(value[wrong[0]])}"
                )
        return value

    @field_validator("metrics", mode="before")
    @classmethod
    def _metric_entries(cls, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
            raise ValueError(
                "must be a list of metric entries (mappings with scorer, task_names, ...) or the "
                f"path of a metrics YAML file, got {shown(value)}"
            )
        return value

    @field_validator("annotations")
    @classmethod
    def _one_set_per_annotator(cls, entries: list[AnnotationsEntry]) -> list[AnnotationsEntry]:
        _distinct([e.annotator_id for e in entries], "annotator_id")
        return entries

    @field_validator("results")
    @classmethod
    def _one_run_per_judge(cls, entries: list[ResultsEntry]) -> list[ResultsEntry]:
        _distinct([e.judge_id for e in entries], "judge_id")
        return entries

    @classmethod
    def _error_root(cls, data: dict[str, Any]) -> str:
        return "project.yaml"


def _safe(name: str, field: str) -> str:
    """`name`, which names files in the project: a safe file name."""
    try:
        return check_safe_name(name, field=field)
    except UnsafeNameError as exc:
        raise ValueError(exc.message.removeprefix(f"{field} ")) from None


def _distinct(owners: list[str], field: str) -> None:
    """Each owner once: a second import of the same id would replace the first."""
    seen: dict[str, int] = {}
    for index, owner in enumerate(owners):
        if owner in seen:
            raise ValueError(
                f"[{index}] {field} {shown(owner)} is also given by [{seen[owner]}] (the later "
                "import would replace the earlier); give each file its own id"
            )
        seen[owner] = index
