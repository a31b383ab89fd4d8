"""Label issues in a user's own data: E-NKCVS on out-of-fold probabilities a user already has (:mod:`.oof`), the ranked
label-issue table (:mod:`.issues`), its review sheet (:mod:`.review`), cleanlab's confident learning beside it
(:mod:`.confident`) and the ``enkcvs find-issues`` command (:mod:`.cli`)."""
