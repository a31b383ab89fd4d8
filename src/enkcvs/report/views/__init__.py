"""Views of recorded runs: the text of the pages' generated blocks, computed from a run's CSV tables (methods,
settings, ladder rungs are read from the rows, so a run with other methods or rungs renders without a change here).

One module per kind of view: :mod:`~enkcvs.report.views.selection` (Table 1, Theorem 1, the rankings),
:mod:`~enkcvs.report.views.table2` (test accuracy beside the paper's or another run's),
:mod:`~enkcvs.report.views.ladder` (the ablation ladder), :mod:`~enkcvs.report.views.diff` (two runs' tables),
:mod:`~enkcvs.report.views.retired` (retired runs, from the history that keeps them),
:mod:`~enkcvs.report.views.issues` (label-issue rankings), :mod:`~enkcvs.report.views.review_list` (the review list
beside cleanlab's), :mod:`~enkcvs.report.views.row` (one row gathered from several runs),
:mod:`~enkcvs.report.views.standing` (where E-NKCVS stands per setting) and :mod:`~enkcvs.report.views.gpu_check`
(the GPU check's measurements); :mod:`enkcvs.report.views.common` holds what they share, and the sentence naming a run
is :func:`enkcvs.recording.provenance.run_line`. Every sentence of a page that quotes a result is a view's
(``tests/test_page_numbers.py``). :mod:`enkcvs.report.pages.blocks` names each view and puts them into the pages.
"""
