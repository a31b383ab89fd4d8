from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.issues import select_out_of_fold

    select_out_of_fold(
        probabilities=snakemake.input.probabilities,
        labels=snakemake.input.labels,
        true_labels=snakemake.input.get("true_labels"),
        settings=dict(snakemake.params.settings),
        table=snakemake.output.table,
        metrics=snakemake.output.metrics,
        provenance_fields=dict(snakemake.wildcards, code=snakemake.params.code),
    )
