from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.folds import train_fold
    from enkcvs.training.device import job_execution

    train_fold(
        dataset=snakemake.input.dataset,
        labels=snakemake.input.labels,
        tokens=snakemake.input.get("tokens"),
        recipe=snakemake.params.recipe,
        seed=int(snakemake.wildcards.seed),
        num_folds=int(snakemake.wildcards.K),
        iteration=int(snakemake.wildcards.m),
        fold=int(snakemake.wildcards.k),
        execution=job_execution(snakemake.resources, threads=snakemake.threads),
        output=snakemake.output.predictions,
        provenance_fields=dict(snakemake.wildcards, code=snakemake.params.code),
        canonical=snakemake.params.canonical,
    )
