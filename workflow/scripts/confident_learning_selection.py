from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.confident import confident_learning_selection

    confident_learning_selection(
        predictions=list(snakemake.input.predictions),
        labels=snakemake.input.labels,
        output=snakemake.output.selection,
        provenance_fields=dict(snakemake.wildcards, code=snakemake.params.code),
    )
