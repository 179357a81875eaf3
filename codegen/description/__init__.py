"""The description side: :class:`Model` (a system ready for ``KanesMethod(**model.kwargs)``)
and the shapes drawn for it. The example catalogue is :mod:`codegen.examples`, URDF robots
:mod:`codegen.robots`, flexible bodies :mod:`codegen.flexible`.
"""
