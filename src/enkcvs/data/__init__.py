"""The data: the project's prepared form of a dataset (:mod:`.datasets`), where each dataset comes from (the
:mod:`.sources` registry) and the tokenising of texts (:mod:`.text`). Heavy packages (torchvision, transformers) are
imported inside the loaders that need them."""
