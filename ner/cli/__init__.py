"""Console entry points: one thin module per command (parse, call the library, print).

The library never imports this package.
"""
