"""The modules of ``torch.utils.benchmark``: ``common`` (what a measurement holds and prints) and ``timer``."""
