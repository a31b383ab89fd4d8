import logging
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line-buffered: the log can be followed while the job runs
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(message)s")

from enkcvs.steps import train_final

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
