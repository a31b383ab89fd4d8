from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.final import train_final
    from enkcvs.training.device import job_execution

    train_final(
        dataset=snakemake.input.dataset,
        labels=snakemake.input.labels,
        tokens=snakemake.input.get("tokens"),
        selection=snakemake.input.get("selection"),
        method=snakemake.params.method,
        recipe=snakemake.params.recipe,
        gamma=snakemake.params.gamma,
        options=dict(snakemake.params.options),
        seed=int(snakemake.wildcards.seed),
        execution=job_execution(snakemake.resources, threads=snakemake.threads),
        output=snakemake.output.result,
        provenance_fields=dict(snakemake.wildcards, code=snakemake.params.code),
    )
