"""`nki.compiler.psum`: allocation directives for PSUM tiles (see tandem.nki.compiler)."""

from ._alloc import allocation

alloc, mod_alloc, auto_alloc = allocation("psum")
