"""What the Snakemake workflow calls: one function per step (:mod:`.steps`, a module per rules file), the config checks
a schema cannot express (:mod:`.config`), where the rules write their files (:mod:`.layout`), the fold predictions read
back (:mod:`.predictions`), what every job does around its call (:mod:`.job`), and the choice of a baseline's
hyperparameters on noisy validation data (:mod:`.tuning`)."""
