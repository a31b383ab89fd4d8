"""The pages: each page's generated blocks, rendered from the views of recorded runs (:mod:`.blocks`), and the
numbers its prose binds to a record's field (:mod:`.values`)."""
