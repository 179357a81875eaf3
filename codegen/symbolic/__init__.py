"""Expression helpers under every stage: numeric probes and vanishing checks, walks over
expression graphs, 3-vectors, spatial algebra, forward-mode differentiation and operation counts.
They import nothing else of the package.
"""
