import sys

sys.stderr = open(snakemake.log[0], "w")

from enkcvs.steps import make_noisy_labels

make_noisy_labels(
    dataset=snakemake.input.dataset,
    noise=snakemake.wildcards.noise,
    seed=int(snakemake.wildcards.seed),
    asymmetric_map=snakemake.params.asymmetric_map,
    output=snakemake.output.labels,
)
