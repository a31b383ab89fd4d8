from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.final import train_final

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
        threads=snakemake.threads,
        gpus=snakemake.resources.gpu,
        allow_cpu_fallback=bool(snakemake.resources.cpu_fallback),
        output=snakemake.output.result,
        provenance_fields=dict(snakemake.wildcards),
    )
