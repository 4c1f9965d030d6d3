"""`nki.typing` for the tandem tracer: names kernels use only in annotations
(`def kernel(a: nt.tensor, b: nt.tensor[[128, 512], nl.float32])`). Every name is accepted;
the tracer takes shapes and element types from the arguments, not from annotations."""


class _Annotation:
    """An annotation-only name; subscripting and calling it give annotations too."""

    def __init__(self, name):
        self._name = name

    def __getitem__(self, item):
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __repr__(self):
        return f"nt.{self._name}"


tensor = _Annotation("tensor")
mutable_tensor = _Annotation("mutable_tensor")
scalar = _Annotation("scalar")


def __getattr__(name):
    if name.startswith("_"):
        raise AttributeError(name)
    return _Annotation(name)
