"""`project.yaml`: a whole project (data, task, judges, labels, metrics) described in one file.

`schema` declares the file (`ProjectFile`, each key documented), `reader` checks it and what
its paths lead to (with `_checks`), every problem at once (`read_project_yaml` → `ProjectSpec`,
declared in `spec`), `writer` writes a project's own copy, and `settings` reads what commands
need of it each time (the metrics, the drift thresholds). The commands that build a
project from it (`meta-evaluator init --from`, `add-judges`, ...) live with the command line,
above the facade.
"""

from meta_evaluator.project_yaml.reader import (
    PROJECT_FILE,
    check_project,
    parse_project_yaml,
    read_metrics_file,
    read_project_judges,
    read_project_yaml,
    read_task_yaml,
)
from meta_evaluator.project_yaml.schema import (
    AnnotationsEntry,
    DataSection,
    ProjectFile,
    ResultsEntry,
    SampleSection,
)
from meta_evaluator.project_yaml.settings import (
    METRICS_FILE,
    read_drift_thresholds,
    read_project_metrics,
)
from meta_evaluator.project_yaml.spec import JudgesSource, LabelsSource, ProjectSpec
from meta_evaluator.project_yaml.writer import dump_project_yaml, write_project_yaml

__all__ = [
    "METRICS_FILE",
    "PROJECT_FILE",
    "AnnotationsEntry",
    "DataSection",
    "JudgesSource",
    "LabelsSource",
    "ProjectFile",
    "ProjectSpec",
    "ResultsEntry",
    "SampleSection",
    "check_project",
    "dump_project_yaml",
    "parse_project_yaml",
    "read_drift_thresholds",
    "read_metrics_file",
    "read_project_judges",
    "read_project_metrics",
    "read_project_yaml",
    "read_task_yaml",
    "write_project_yaml",
]
