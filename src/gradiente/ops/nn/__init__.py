"""The implementation of ``gradiente.nn.functional``, one module per family (see ``functional``)."""
