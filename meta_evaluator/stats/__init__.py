"""Pure statistics behind every scorer: plain sequences in, numbers out, no I/O.

Modules: `classification` (confusion matrix, accuracy, precision, recall, F1), `agreement`
(Cohen's and Fleiss' kappa, Krippendorff's alpha), `alt_test` (the alternative annotator test),
`preference` (pairwise preference votes: relevance, strength), `fairness` (group fairness of
binary predictions), `stereotype` (context association tests: LMS, SS, iCAT), `counterfactual`
(change rates), `multiple_choice` (format errors and accuracy), `text` (difflib similarity),
`bootstrap` (paired percentile intervals) and `proportions` (Wilson intervals of rates).
Undefined values are None.
"""

from meta_evaluator.stats import (
    agreement,
    alt_test,
    bootstrap,
    classification,
    counterfactual,
    fairness,
    multiple_choice,
    preference,
    proportions,
    stereotype,
    text,
)

__all__ = [
    "agreement",
    "alt_test",
    "bootstrap",
    "classification",
    "counterfactual",
    "fairness",
    "multiple_choice",
    "preference",
    "proportions",
    "stereotype",
    "text",
]
