"""Views of recorded runs: the text of the pages' generated blocks, computed from a run's CSV tables (methods,
settings, ladder rungs are read from the rows, so a run with other methods or rungs renders without a change here).

One module per kind of view: :mod:`~enkcvs.runs.views.provenance` (the run itself), :mod:`~enkcvs.runs.views.selection`
(Table 1, Theorem 1, the rankings), :mod:`~enkcvs.runs.views.table2` (test accuracy beside the paper's or another
run's), :mod:`~enkcvs.runs.views.ladder` (the ablation ladder), :mod:`~enkcvs.runs.views.diff` (two runs' tables),
:mod:`~enkcvs.runs.views.issues` (label-issue rankings), :mod:`~enkcvs.runs.views.row` (one row gathered from
several runs) and :mod:`~enkcvs.runs.views.standing` (where E-NKCVS stands per setting);
:mod:`enkcvs.runs.views.common` holds what they share. Every sentence of a page that quotes a result is a view's
(``tests/test_page_numbers.py``). :mod:`enkcvs.runs.pages` names each view and puts them into the pages; recording
runs and their provenance is :mod:`enkcvs.runs.recorded`'s.
"""
