"""One function per workflow step: read the step's inputs, call the method, write self-describing outputs.

One module per rules file of ``workflow/rules/`` (``data``, ``noise``, ``folds``, ``select``, ``final``, ``confident``,
``issues``); the report rules' steps are :mod:`enkcvs.report.render`. The thin scripts under ``workflow/scripts`` call
exactly one of these functions. Steps that train import torch themselves, so the selection and report steps start
fast.
"""
