from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.confident import compare_confident_learning

    compare_confident_learning(
        predictions=list(snakemake.input.predictions),
        labels=snakemake.input.labels,
        threshold=int(snakemake.wildcards.t),
        output=snakemake.output.table,
        ranking=snakemake.output.ranking,
        provenance_fields=dict(snakemake.wildcards, code=snakemake.params.code),
    )
