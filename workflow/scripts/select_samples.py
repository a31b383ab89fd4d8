from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.select import select_samples

    select_samples(
        predictions=list(snakemake.input.predictions),
        labels=snakemake.input.labels,
        threshold=int(snakemake.wildcards.t),
        table=snakemake.output.selection,
        metrics=snakemake.output.metrics,
        provenance_fields=dict(snakemake.wildcards, code=snakemake.params.code),
    )
