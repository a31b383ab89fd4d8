from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.final import average_ensemble

    average_ensemble(
        members=list(snakemake.input.members),
        dataset=snakemake.input.dataset,
        output=snakemake.output.result,
        provenance_fields=dict(snakemake.wildcards, code=snakemake.params.code),
    )
