from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.final import train_finals

    train_finals(
        dataset=snakemake.input.dataset,
        labels=snakemake.input.labels,
        tokens=snakemake.input.get("tokens"),
        models=snakemake.params.models,
        seed=int(snakemake.wildcards.seed),
        threads=snakemake.threads,
        gpus=snakemake.resources.gpu,
        allow_cpu_fallback=bool(snakemake.resources.cpu_fallback),
        outputs=list(snakemake.output.results),
        provenance_fields=dict(snakemake.wildcards),
        stacked=snakemake.params.stacked,
    )
