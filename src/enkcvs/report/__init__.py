"""The report: the paper's tables aggregated from the workflow's result files (:mod:`.tables`; a final model's test
accuracy read three ways alike, :mod:`.readings`), set beside the paper's published numbers (:mod:`.paper`;
:mod:`.comparison` and the paper-shaped :mod:`.paper_table1`, :mod:`.paper_table2`, :mod:`.paper_table3`), the dataset
summary, the figures, how they are titled (:mod:`.titles`) and written (:mod:`.tabular`), the report rules' entry
points (:mod:`.render`) and the audit that traces every cell back to its files (:mod:`.audit`); what each
method's trainings cost (:mod:`.trainings`) and what each output ran with (:mod:`.output_provenance`); then the
pages: recorded runs gathered (:mod:`.gathered`), the paper's claims against them (:mod:`.claims`, by the tests of
:mod:`.statistics`), two records under two CPU classes' kernels (:mod:`.reproducibility`), the cleanlab benchmark
(:mod:`.versus`), and the pages rendered from templates (:mod:`.pages`). matplotlib is imported inside the functions
that draw."""
