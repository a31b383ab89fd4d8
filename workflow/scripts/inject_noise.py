from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.noise import make_noisy_labels

    make_noisy_labels(
        dataset=snakemake.input.dataset,
        noise=snakemake.wildcards.noise,
        seed=int(snakemake.wildcards.seed),
        asymmetric_map=snakemake.params.asymmetric_map,
        code=snakemake.params.code,
        output=snakemake.output.labels,
    )
