"""The paper's method, one module per concept and one function per equation: label noise (:mod:`.noise`), the folds
(:mod:`.folds`), mixup (:mod:`.mixup`), the vote (:mod:`.selection`), pseudo labels and weights (:mod:`.weights`), the
training losses (:mod:`.losses`), precision and recall (:mod:`.metrics`), Theorem 1 (:mod:`.theory`), the ranking
of label issues (:mod:`.ranking`) and the names of the methods compared (:mod:`.methods`).

Pure functions of arrays and names: nothing here reads or writes a file. Only :mod:`.mixup` and :mod:`.losses` need torch.
"""
