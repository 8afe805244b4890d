"""The ``eventide`` command line: ``new``, ``run``, ``api-server`` and ``web``.

Needs the ``cli`` extra (click, rich); ``api-server`` and ``web`` also the ``server`` extra.
"""
