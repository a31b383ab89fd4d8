from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.final import train_ensemble_member
    from enkcvs.training.device import job_execution

    train_ensemble_member(
        dataset=snakemake.input.dataset,
        labels=snakemake.input.labels,
        tokens=snakemake.input.get("tokens"),
        recipe=snakemake.params.recipe,
        seed=int(snakemake.wildcards.seed),
        member=int(snakemake.wildcards.member),
        execution=job_execution(snakemake.resources, threads=snakemake.threads),
        output=snakemake.output.probabilities,
        provenance_fields=dict(snakemake.wildcards, code=snakemake.params.code),
    )
