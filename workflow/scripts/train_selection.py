from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.folds import train_selection

    train_selection(
        dataset=snakemake.input.dataset,
        labels=snakemake.input.labels,
        tokens=snakemake.input.get("tokens"),
        recipe=snakemake.params.recipe,
        seed=int(snakemake.wildcards.seed),
        num_folds=snakemake.params.num_folds,
        iterations=snakemake.params.iterations,
        stacked=snakemake.params.stacked,
        threads=snakemake.threads,
        gpus=snakemake.resources.gpu,
        allow_cpu_fallback=bool(snakemake.resources.cpu_fallback),
        outputs=list(snakemake.output.predictions),
        provenance_fields={**dict(snakemake.wildcards), "K": str(snakemake.params.num_folds)},
    )
