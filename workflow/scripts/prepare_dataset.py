from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.data import prepare_dataset

    prepare_dataset(
        source=snakemake.params.source,
        options=dict(snakemake.params.options),
        code=snakemake.params.code,
        output=snakemake.output.dataset,
    )
