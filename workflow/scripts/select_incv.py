from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.select import select_incv
    from enkcvs.training.device import job_execution

    select_incv(
        dataset=snakemake.input.dataset,
        labels=snakemake.input.labels,
        tokens=snakemake.input.get("tokens"),
        recipe=snakemake.params.recipe,
        iterations=snakemake.params.iterations,
        seed=int(snakemake.wildcards.seed),
        execution=job_execution(snakemake.resources, threads=snakemake.threads),
        table=snakemake.output.selection,
        metrics=snakemake.output.metrics,
        provenance_fields=dict(snakemake.wildcards, code=snakemake.params.code),
    )
