from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.folds import train_stack
    from enkcvs.training.device import job_execution

    train_stack(
        dataset=snakemake.input.dataset,
        labels=snakemake.input.labels,
        recipe=snakemake.params.recipe,
        seed=int(snakemake.wildcards.seed),
        num_folds=int(snakemake.wildcards.K),
        iterations=snakemake.params.iterations,
        execution=job_execution(snakemake.resources, threads=snakemake.threads),
        output=snakemake.output.stack,
        provenance_fields=dict(snakemake.wildcards, code=snakemake.params.code),
        canonical=snakemake.params.canonical,
    )
