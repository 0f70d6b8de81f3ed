"""Pure statistics behind every scorer: plain sequences in, numbers out, no I/O.

Modules: `classification` (confusion matrix, accuracy, precision, recall, F1), `agreement`
(Cohen's and Fleiss' kappa, Krippendorff's alpha), `alt_test` (the alternative annotator test),
`preference` (pairwise preference votes: relevance, strength), `fairness` (group fairness of
binary predictions), `stereotype` (context association tests: LMS, SS, iCAT), `counterfactual`
(change rates), `multiple_choice` (format errors and accuracy), `text` (difflib similarity),
`majority` (the humans' majority of an item: one rule for every score, table and page),
`bootstrap` (paired percentile intervals), `paired` (two labellings of the same items: what
changed, McNemar's exact test), `proportions` (Wilson interval, binomial test),
`verdict` (may a judge stand in for the humans?), and the judge diagnostics `position`
(position bias: `position_bias`), `consistency` (a judge's agreement with itself:
`self_consistency`), `label_budget` (how many human labels a study needs: `plan_labels`) and
`drift` (a judge's labels between two runs: `label_shift`). Undefined values are None.
"""

from meta_evaluator.stats import (
    agreement,
    alt_test,
    bootstrap,
    classification,
    consistency,
    counterfactual,
    drift,
    fairness,
    label_budget,
    majority,
    multiple_choice,
    paired,
    position,
    preference,
    proportions,
    stereotype,
    text,
    verdict,
)
from meta_evaluator.stats.consistency import self_consistency
from meta_evaluator.stats.position import position_bias

__all__ = [
    "agreement",
    "alt_test",
    "bootstrap",
    "classification",
    "consistency",
    "counterfactual",
    "drift",
    "fairness",
    "label_budget",
    "majority",
    "multiple_choice",
    "paired",
    "position",
    "position_bias",
    "preference",
    "proportions",
    "self_consistency",
    "stereotype",
    "text",
    "verdict",
]
