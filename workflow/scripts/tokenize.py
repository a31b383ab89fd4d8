from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.data import tokenize_dataset

    tokenize_dataset(
        dataset=snakemake.input.dataset,
        checkpoint=snakemake.params.model_name,
        max_length=snakemake.params.max_length,
        code=snakemake.params.code,
        output=snakemake.output.tokens,
    )
