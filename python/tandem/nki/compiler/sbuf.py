"""`nki.compiler.sbuf`: allocation directives for SBUF tiles (see tandem.nki.compiler)."""

from ._alloc import allocation

alloc, mod_alloc, auto_alloc = allocation("sbuf")
